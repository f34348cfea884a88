// Hono adapter: the raw bytes of `c.req.raw` (or Hono's cached copy of them), the core's answer, Workers' waitUntil.
import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { type BodyResult, readBodyWithin } from '../src/body.js';
import type { Logger } from '../src/logger.js';
import { ON_WORKERS } from '../src/on-workers.js';
import type { BodyProblem, HandleInput, Receiver } from '../src/receiver.js';
import { notAReceiver } from '../src/receiver-given.js';
import type { WebhookResponse } from '../src/responses.js';
import { withoutConnection } from './node-answer.js';

const HONO_FIX =
  "the body was read before the webhook handler (c.req.json(), c.req.text() or a validator('json') ran first?), so only re-serialised text is left. Give the webhook route no validator or body middleware: app.all('/webhooks/workforce', createHonoHandler(receiver))";

// Said when the execution context's waitUntil throws: the delivery is still answered, as receiver.fetch does.
const WAIT_UNTIL_THREW =
  "workforce-webhooks: c.executionCtx.waitUntil threw, so queued work is not kept alive past the answer. Fix: hand Hono the Worker's context itself, so that waitUntil keeps its `this`: app.fetch(request, env, ctx), not { waitUntil: ctx.waitUntil }";

// Said on Workers when the request has no execution context at all (`app.fetch(request, env)`): workerd ends the
// request's timers and I/O with it, so queued work never finishes.
const NO_CONTEXT =
  "workforce-webhooks: Hono was called on Cloudflare Workers with no execution context, so queued work ends with the request and deliveries answered 202 are not handled. Fix: hand Hono the Worker's context: export default app, or app.fetch(request, env, ctx)";

const waitUntilSaid = new WeakSet<object>();
const noContextSaid = new WeakSet<object>();

/**
 * A Hono handler for the webhook route; on Workers, queued work is handed to `c.executionCtx.waitUntil`.
 * @example
 * app.all('/webhooks/workforce', createHonoHandler(receiver));
 */
export function createHonoHandler(
  receiver: Pick<Receiver<unknown>, 'handle' | 'maxBodyBytes' | 'bodyTimeoutMs'> & {
    readonly logger?: Logger;
  },
): (c: Context) => Promise<Response> {
  const wrong = notAReceiver(
    receiver,
    'handle',
    'createHonoHandler',
    "the route's handler",
    "app.all('/webhooks/workforce', createHonoHandler(receiver))",
  );
  if (wrong !== undefined) throw wrong;
  const handle = (input: HandleInput) => receiver.handle(input);
  // Once per receiver, not per handler: on Workers a handler may be made per request around the isolate's receiver.
  const waitUntilThrew = (error: unknown): void => {
    if (waitUntilSaid.has(receiver)) return;
    waitUntilSaid.add(receiver);
    receiver.logger?.warn({ err: error, kind: 'wait_until_threw' }, WAIT_UNTIL_THREW);
  };
  const noContext = (): void => {
    if (noContextSaid.has(receiver)) return;
    noContextSaid.add(receiver);
    receiver.logger?.error({ kind: 'wait_until_missing' }, NO_CONTEXT);
  };
  return async (c) => {
    const { raw } = c.req;
    // On @hono/node-server the Node request's plain header object is at hand (c.env.incoming): read from it,
    // rather than through the Headers wrapper, which normalises every name looked up.
    const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
    const headers = incoming?.headers ?? raw.headers;
    // Not POST: answered (405) unread, as by every other adapter, not after waiting up to bodyTimeoutMs for a body.
    const body =
      raw.method === 'POST'
        ? await readHonoBody(c, receiver.maxBodyBytes, receiver.bodyTimeoutMs, incoming !== undefined)
        : undefined;
    const answer = handle(
      body === undefined || body instanceof Uint8Array
        ? { method: raw.method, headers, body }
        : { method: raw.method, headers, bodyProblem: body },
    );
    const response = answer instanceof Promise ? await answer : answer;
    // @hono/node-server never has an execution context, and `c.executionCtx` throws where there is none: a throw
    // per request costs more than the rest of the adapter. Elsewhere it is asked per request, since one isolate
    // serves requests with a ctx (Workers' fetch) and without (app.request() in a scheduled handler, a test).
    if (incoming === undefined) keepAlive(c, response, waitUntilThrew, noContext);
    // Every answer of the status table carries a JSON body.
    // HTTP/2 has no `connection` header: Node would drop the one a refused body's answer carries with a warning.
    const answerHeaders =
      incoming?.httpVersionMajor === 2 ? withoutConnection(response.headers) : response.headers;
    return c.body(response.body, response.status as ContentfulStatusCode, answerHeaders);
  };
}

// Hono caches the first body read. Only an `arrayBuffer`/`blob` cache still holds the bytes as sent: a `json`
// cache comes back re-serialised and a `text` one decoded (a BOM or invalid UTF-8 would not survive), so a
// signature check on them would be a false 400.
// On Node, the request was parsed from the socket, whose parser holds it to its Content-Length: read in one go.
async function readHonoBody(
  c: Context,
  limit: number,
  timeoutMs: number,
  onNode: boolean,
): Promise<Uint8Array | BodyProblem> {
  const { raw, bodyCache } = c.req;
  let result: BodyResult;
  if (!raw.bodyUsed) result = await readBodyWithin(raw, limit, timeoutMs, onNode);
  else if (bodyCache.arrayBuffer !== undefined) result = new Uint8Array(await bodyCache.arrayBuffer);
  else if (bodyCache.blob !== undefined) result = new Uint8Array(await (await bodyCache.blob).arrayBuffer());
  else return { kind: 'raw_body_unavailable', fix: HONO_FIX };
  if (typeof result !== 'string') return result;
  // Unread but locked: a middleware took a reader of `c.req.raw.body`.
  return result === 'taken' ? { kind: 'raw_body_unavailable', fix: HONO_FIX } : { kind: result };
}

// Hands the answer's background work to Workers' `waitUntil`, where this request has an execution context. Reading
// `background` makes its promise: only then, when there is a platform to hand it to (or, on Workers, to say that
// there is none). A waitUntil that throws (one that lost its `this`, or a context without one) costs the keep-alive,
// never the answer: the event is accepted.
function keepAlive(
  c: Context,
  response: WebhookResponse,
  threw: (error: unknown) => void,
  lost: () => void,
): void {
  let ctx: Context['executionCtx'];
  try {
    ctx = c.executionCtx;
  } catch {
    if (ON_WORKERS && response.background !== undefined) lost();
    return;
  }
  const work = response.background;
  if (work === undefined) return;
  try {
    ctx.waitUntil(work);
  } catch (error) {
    threw(error);
  }
}
