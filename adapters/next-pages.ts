// Next.js Pages Router API route: the raw bytes of the untouched Node request, or, on `runtime: 'edge'`, the Request.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { declaredLength, readStreamBody } from '../src/body.js';
import { createWarnOnce, silentLogger } from '../src/logger.js';
import type { FetchPlatform, HandleInput, Receiver } from '../src/receiver.js';
import { notAReceiver } from '../src/receiver-given.js';
import { answers, toWebResponse } from '../src/responses.js';
import { writeResponse } from './node-answer.js';
import { bodyProblemOf } from './node-failure.js';
import { webStreamOf } from './node-web-stream.js';

const PAGES_FIX =
  'Next parsed the body before the API route. Turn its parser off in the route file: export const config = { api: { bodyParser: false } }';

// Said after what happened to the stream (read, or its encoding set, by a wrapper around the route).
const PAGES_STREAM_FIX =
  'hand the request to the API route unread: nothing (a wrapper around the handler, a middleware) may read it before createNextApiHandler does';

// Node's stream reading is not imported here (raw-body needs Node modules the edge lacks): the request is read as a
// Web stream, so that `workforce-webhooks/next` bundles for an edge route.

/** A Pages Router API route: Node's `(req, res)`, or a `Request` (and Next's event) on `runtime: 'edge'`. */
export interface NextApiRoute {
  (req: IncomingMessage & { body?: unknown }, res: ServerResponse): Promise<void>;
  (request: Request, event?: FetchPlatform): Promise<Response>;
}

/**
 * A Pages Router API route; the file must also export `config = { api: { bodyParser: false } }`.
 * @example
 * export const config = { api: { bodyParser: false } };
 * export default createNextApiHandler(receiver);
 */
export function createNextApiHandler(
  receiver: Pick<Receiver<unknown>, 'handle' | 'maxBodyBytes' | 'bodyTimeoutMs'> &
    Partial<Pick<Receiver<unknown>, 'fetch' | 'logger'>>,
): NextApiRoute {
  const wrong = notAReceiver(
    receiver,
    'handle',
    'createNextApiHandler',
    'the API route',
    'export default createNextApiHandler(receiver)',
  );
  if (wrong !== undefined) throw wrong;
  const { maxBodyBytes: limit, bodyTimeoutMs: timeoutMs, logger } = receiver;
  const warnOnce = createWarnOnce(logger ?? silentLogger);
  // An edge API route (`runtime: 'edge'`) is called as a route handler is: a Request in, a Response out.
  const serveRequest = async (request: Request, event: FetchPlatform | undefined): Promise<Response> => {
    if (receiver.fetch !== undefined) return receiver.fetch(request, event);
    warnOnce(
      'next_wrong_router',
      {},
      "workforce-webhooks: createNextApiHandler was called with a Request (an API route with runtime: 'edge'?) and has no receiver.fetch to answer it. Pass the receiver itself, or use the App Router's handler: export const POST = createNextRouteHandler(receiver) in app/**/route.ts",
      'error',
    );
    return toWebResponse(answers.internalError);
  };
  const serveNode = async (req: IncomingMessage & { body?: unknown }, res: ServerResponse): Promise<void> => {
    const response = await receiver.handle(await readPagesInput(req, limit, timeoutMs));
    writeResponse(res, response, logger);
    // `after()` is App Router only: the route's promise stays open until queued work ends, so the platform
    // does not freeze the function under it.
    await response.background;
  };
  return ((req: (IncomingMessage & { body?: unknown }) | Request, res: ServerResponse | FetchPlatform) =>
    isRequest(req)
      ? serveRequest(req, res as FetchPlatform | undefined)
      : serveNode(req, res as ServerResponse)) as NextApiRoute;
}

/**
 * Whether a route was handed a Web Request (from this realm or another) rather than Node's request, whose `headers`
 * is a plain object. Internal.
 * @example
 * if (isRequest(req)) return receiver.fetch(req);
 */
export const isRequest = (value: object): value is Request =>
  value instanceof Request || typeof (value as { headers?: { get?: unknown } }).headers?.get === 'function';

async function readPagesInput(
  req: IncomingMessage & { body?: unknown },
  limit: number,
  timeoutMs: number,
): Promise<HandleInput> {
  const { method, headers } = req;
  if (method !== 'POST') return { method, headers };
  // With its parser on, Next has read the stream and left a string or an object in `req.body`.
  if (req.body !== undefined)
    return { method, headers, bodyProblem: { kind: 'raw_body_unavailable', fix: PAGES_FIX } };
  if (req.readableEnded) return { method, headers, bodyProblem: bodyProblemOf('read', PAGES_STREAM_FIX) };
  if (req.readableEncoding !== null)
    return { method, headers, bodyProblem: bodyProblemOf('decoded', PAGES_STREAM_FIX) };
  const declared = declaredLength(headers['content-length']);
  const body = await readStreamBody(webStreamOf(req), declared, limit, timeoutMs);
  if (typeof body !== 'string') return { method, headers, body };
  return { method, headers, bodyProblem: bodyProblemOf(body === 'taken' ? 'read' : body, PAGES_STREAM_FIX) };
}
