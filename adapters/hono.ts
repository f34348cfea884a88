// Hono adapter: the raw bytes of `c.req.raw` (or Hono's cached copy of them), the core's answer, Workers' waitUntil.
import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { type BodyResult, readRequestBody } from '../src/body.js';
import { headerValue } from '../src/headers.js';
import type { BodyProblem, Receiver } from '../src/receiver.js';
import { answerOf } from '../src/sync.js';

const HONO_FIX =
  "the body was read before the webhook handler (c.req.json(), c.req.text() or a validator('json') ran first?), so only re-serialised text is left. Give the webhook route no validator or body middleware: app.post('/webhooks/workforce', createHonoHandler(receiver))";

/**
 * A Hono handler for the webhook route; on Workers, queued work is handed to `c.executionCtx.waitUntil`.
 * @example
 * app.post('/webhooks/workforce', createHonoHandler(receiver));
 */
export function createHonoHandler(
  receiver: Pick<Receiver<unknown>, 'handle' | 'maxBodyBytes'>,
): (c: Context) => Promise<Response> {
  // `c.executionCtx` throws where there is none (Node, Bun); a throw per request costs more than the rest of the
  // adapter, so the first one is remembered: the runtime does not change under a running handler.
  let executionCtx = true;
  const handle = answerOf(receiver);
  return async (c) => {
    const { raw } = c.req;
    // On @hono/node-server the Node request's plain header object is at hand (c.env.incoming): read from it,
    // rather than through the Headers wrapper, which normalises every name looked up.
    const headers = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming?.headers ?? raw.headers;
    let body: Uint8Array | BodyProblem;
    // The common case read right here, as readRequestBody would (a declared length within the limit is held to by
    // the HTTP layer): one await on the bytes instead of one per helper frame, which cost more than the read.
    if (
      !raw.bodyUsed &&
      Number(headerValue(headers, 'content-length') ?? Number.NaN) <= receiver.maxBodyBytes
    ) {
      try {
        body = new Uint8Array(await raw.arrayBuffer());
      } catch {
        body = { kind: 'unreadable' };
      }
    } else body = await readHonoBody(c, receiver.maxBodyBytes);
    const answer = handle(
      body instanceof Uint8Array
        ? { method: raw.method, headers, body }
        : { method: raw.method, headers, bodyProblem: body },
    );
    const response = answer instanceof Promise ? await answer : answer;
    // Reading `background` makes its promise: only where there is a platform to hand it to.
    if (executionCtx && response.background !== undefined) executionCtx = keepAlive(c, response.background);
    // Every answer of the status table carries a JSON body.
    return c.body(response.body, response.status as ContentfulStatusCode, response.headers);
  };
}

// Hono caches the first body read. Only an `arrayBuffer`/`blob` cache still holds the bytes as sent: a `json`
// cache comes back re-serialised and a `text` one decoded (a BOM or invalid UTF-8 would not survive), so a
// signature check on them would be a false 400.
async function readHonoBody(c: Context, limit: number): Promise<Uint8Array | BodyProblem> {
  const { raw, bodyCache } = c.req;
  let result: BodyResult;
  if (!raw.bodyUsed) result = await readRequestBody(raw, limit);
  else if (bodyCache.arrayBuffer !== undefined) result = new Uint8Array(await bodyCache.arrayBuffer);
  else if (bodyCache.blob !== undefined) result = new Uint8Array(await (await bodyCache.blob).arrayBuffer());
  else return { kind: 'raw_body_unavailable', fix: HONO_FIX };
  return typeof result === 'string' ? { kind: result } : result;
}

// Hands work to Workers' `waitUntil`; false where there is no execution context (Node, Bun: the process stays
// alive anyway).
function keepAlive(c: Context, work: Promise<void>): boolean {
  let ctx: Context['executionCtx'];
  try {
    ctx = c.executionCtx;
  } catch {
    return false;
  }
  ctx.waitUntil(work);
  return true;
}
