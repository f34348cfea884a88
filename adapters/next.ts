// Next.js adapters: an App Router route handler (`after()` keeps queued work alive) and a Pages Router API route.
import type { ServerResponse } from 'node:http';
import * as nextServer from 'next/server.js';
import { createWarnOnce } from '../src/logger.js';
import type { FetchPlatform, Receiver } from '../src/receiver.js';
import { notAReceiver } from '../src/receiver-given.js';
import { answers, toWebResponse } from '../src/responses.js';
import { isRequest } from './next-pages.js';
import { writeResponse } from './node-answer.js';

export { createNextApiHandler, type NextApiRoute } from './next-pages.js';

type After = (task: Promise<unknown>) => void;
// `after` is stable from Next 15.1; 15.0 named it `unstable_after`, read through Reflect: webpack checks a property
// read on the namespace against Next's exports and fails the build on the name newer Nexts no longer have (and a
// copy of the namespace, `{ ...nextServer }`, holds none of its names under webpack).
const after: After | undefined =
  (nextServer as { after?: After }).after ?? (Reflect.get(nextServer, 'unstable_after') as After | undefined);

const WRONG_ROUTER =
  "workforce-webhooks: createNextRouteHandler was called with a Node request and response, as a Pages Router API route is (exported from pages/api?), so it answers 500. It is for app/**/route.ts; in pages/api use the Pages Router's handler: export default createNextApiHandler(receiver), with export const config = { api: { bodyParser: false } }";

/**
 * The App Router route handler: `export const POST = createNextRouteHandler(receiver)` in `route.ts`.
 * @example
 * export const POST = createNextRouteHandler(receiver);
 */
export function createNextRouteHandler(
  receiver: Pick<Receiver<unknown>, 'fetch' | 'logger'>,
): (request: Request) => Promise<Response> {
  const wrong = notAReceiver(
    receiver,
    'fetch',
    'createNextRouteHandler',
    'the route handler',
    'export const POST = createNextRouteHandler(receiver)',
  );
  if (wrong !== undefined) throw wrong;
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
  const platform = { waitUntil };
  // Exported from pages/api by mistake, it is called with Node's (req, res): said once, answered 500 (the sender
  // retries until the route is fixed), never a TypeError.
  const wrongRouter = (res: unknown): Promise<Response> => {
    warnOnce('next_wrong_router', {}, WRONG_ROUTER, 'error');
    if (typeof (res as ServerResponse | undefined)?.writeHead === 'function')
      writeResponse(res as ServerResponse, answers.internalError);
    return Promise.resolve(toWebResponse(answers.internalError));
  };
  // Exported from a Pages API route with runtime: 'edge', it is called with Next's event, and `after()` throws
  // there (no request scope): the event's own `waitUntil` keeps the work alive instead. The App Router's second
  // argument (`{ params }`) has none.
  return (request, second?: unknown) => {
    if (!isRequest(request)) return wrongRouter(second);
    const event = second as FetchPlatform | undefined;
    return receiver.fetch(request, typeof event?.waitUntil === 'function' ? event : platform);
  };
}
