// Next.js adapters: an App Router route handler (`after()` keeps queued work alive) and a Pages Router API route.
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as nextServer from 'next/server.js';
import { createWarnOnce } from '../src/logger.js';
import type { Receiver } from '../src/receiver.js';
import { readNodeRequest } from './node.js';
import { writeResponse } from './node-io.js';

const PAGES_FIX =
  'Next parsed the body before the API route. Turn its parser off in the route file: export const config = { api: { bodyParser: false } }';

type After = (task: Promise<unknown>) => void;
// `after` is stable from Next 15.1; 15.0 named it `unstable_after`.
const after: After | undefined =
  (nextServer as { after?: After }).after ?? (nextServer as { unstable_after?: After }).unstable_after;

/**
 * The App Router route handler: `export const POST = createNextRouteHandler(receiver)` in `route.ts`.
 * @example
 * export const POST = createNextRouteHandler(receiver);
 */
export function createNextRouteHandler(
  receiver: Pick<Receiver<unknown>, 'fetch' | 'logger'>,
): (request: Request) => Promise<Response> {
  const warnOnce = createWarnOnce(receiver.logger);
  // On serverless the function may be frozen once the answer is sent: `after()` keeps it up until the work ends.
  const waitUntil = (work: Promise<unknown>): void => {
    try {
      if (after === undefined) throw new Error('next/server has no after()');
      after(work);
    } catch (error) {
      // Outside a Next request (a script, a test) there is nothing to hand over to: the process stays up anyway.
      warnOnce(
        'after_unavailable',
        { err: error },
        'workforce-webhooks: after() is unavailable here, so queued work is not kept alive past the answer',
      );
    }
  };
  return (request) => receiver.fetch(request, { waitUntil });
}

/**
 * A Pages Router API route; the file must also export `config = { api: { bodyParser: false } }`.
 * @example
 * export const config = { api: { bodyParser: false } };
 * export default createNextApiHandler(receiver);
 */
export function createNextApiHandler(
  receiver: Pick<Receiver<unknown>, 'handle' | 'maxBodyBytes' | 'bodyTimeoutMs'>,
): (req: IncomingMessage & { body?: unknown }, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    const { method, headers } = req;
    // With its parser on, Next has read the stream and left a string or an object in `req.body`.
    const input =
      req.body !== undefined
        ? { method, headers, bodyProblem: { kind: 'raw_body_unavailable', fix: PAGES_FIX } as const }
        : await readNodeRequest(req, receiver.maxBodyBytes, PAGES_FIX, receiver.bodyTimeoutMs);
    const response = await receiver.handle(input);
    writeResponse(res, response);
    // `after()` is App Router only: the route's promise stays open until queued work ends, so the platform
    // does not freeze the function under it.
    await response.background;
  };
}
