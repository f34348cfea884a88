// receiver.fetch: the Web-standard face of the delivery path (Bun, Deno, Workers, Next), `Request` in, `Response` out.
import { readRequestBody } from './body.js';
import type { HandleInput } from './receiver-handle.js';
import { type Answer, toWebResponse, type WebhookResponse } from './responses.js';

/** Platform hooks for `receiver.fetch`: on Workers pass `ctx` itself, whose `waitUntil` is called on it. */
export interface FetchPlatform {
  readonly waitUntil?: (promise: Promise<unknown>) => void;
}

// What `receiver.fetch` logs when the Request's body was read before it.
const FETCH_FIX =
  'pass the Request to receiver.fetch (or to the Next route handler) unread: nothing may call request.text(), request.json() or request.arrayBuffer() before it (to look at the body first, read a request.clone())';
// What `receiver.fetch` logs when the platform's waitUntil throws (Workers' `ctx.waitUntil` called without its `ctx`).
const WAIT_UNTIL_FIX =
  'pass the platform context itself so that waitUntil keeps its `this`, e.g. receiver.fetch(request, ctx), not { waitUntil: ctx.waitUntil }';

/**
 * `receiver.fetch` over the delivery path: reads the body within the limits, answers, and hands the answer's
 * background work to the platform's `waitUntil`.
 * @example
 * const fetch = createFetch({ handle, maxBodyBytes, bodyTimeoutMs, warnOnce });
 * export default { fetch: (request, env, ctx) => fetch(request, ctx) };
 */
export function createFetch({
  handle,
  maxBodyBytes,
  bodyTimeoutMs,
  warnOnce,
}: {
  readonly handle: (input: HandleInput) => Answer;
  readonly maxBodyBytes: number;
  readonly bodyTimeoutMs: number;
  readonly warnOnce: (kind: string, obj: object, msg: string) => void;
}): (request: Request, platform?: FetchPlatform) => Promise<Response> {
  // The keep-alive is the platform's: when it throws (Workers' `ctx.waitUntil` lost its `this`), the delivery is still
  // answered as planned, as its event is already claimed and queued, and the fix is logged once.
  const keepAlive = (platform: FetchPlatform, background: Promise<void>): void => {
    try {
      platform.waitUntil!(background);
    } catch (error) {
      warnOnce(
        'wait_until_failed',
        { err: error, fix: WAIT_UNTIL_FIX },
        `workforce-webhooks: platform.waitUntil threw, so queued work is not kept alive past the answer. Fix: ${WAIT_UNTIL_FIX}`,
      );
    }
  };

  return async (request, platform) => {
    let response: WebhookResponse;
    const { method, headers } = request;
    // Not POST: the body is not read, and the answer (405) is still reported like every other.
    if (method !== 'POST') response = await handle({ method, headers });
    else {
      const body = await readRequestBody(request, maxBodyBytes, bodyTimeoutMs);
      const answer = handle(
        typeof body !== 'string'
          ? { method, headers, body }
          : // 'taken': something read the body first (request.text() in a wrapper, a logging middleware), so
            // the signed bytes are gone: the host's mistake, answered and logged with the fix, not a bad payload.
            {
              method,
              headers,
              bodyProblem:
                body === 'taken' ? { kind: 'raw_body_unavailable', fix: FETCH_FIX } : { kind: body },
            },
      );
      response = answer instanceof Promise ? await answer : answer;
    }
    // `background` is read only for a platform that keeps work alive: reading it makes its promise.
    if (platform?.waitUntil !== undefined) {
      const background = response.background;
      if (background !== undefined) keepAlive(platform, background);
    }
    return toWebResponse(response);
  };
}
