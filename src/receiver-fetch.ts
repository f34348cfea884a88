// receiver.fetch: the Web-standard face of the delivery path (Bun, Deno, Workers, Next), `Request` in, `Response` out.
import { readRequestBody } from './body.js';
import { ON_WORKERS } from './on-workers.js';
import type { HandleInput } from './receiver-handle.js';
import { type Answer, answers, toWebResponse, type WebhookResponse } from './responses.js';

/** Platform hooks for `receiver.fetch`: on Workers pass `ctx` itself, whose `waitUntil` is called on it. */
export interface FetchPlatform {
  readonly waitUntil?: (promise: Promise<unknown>) => void;
}

// What `receiver.fetch` logs when the Request's body was read before it.
const FETCH_FIX =
  'pass the Request to receiver.fetch (or to the Next route handler) unread: nothing may call request.text(), request.json() or request.arrayBuffer() before it (to look at the body first, read a request.clone())';
// What `receiver.fetch` logs when it is handed a framework's request instead of a Web Request (`app.post(path,
// receiver.fetch)` on Express, `http.createServer(receiver.fetch)`).
const NOT_A_REQUEST_FIX =
  "receiver.fetch takes a Web Request (Bun, Deno, Workers, a Next route handler). On node:http use createNodeHandler(receiver) from 'workforce-webhooks/node', on Express createExpressMiddleware(receiver) from 'workforce-webhooks/express', on Fastify createFastifyPlugin(receiver), on Hono createHonoHandler(receiver) or receiver.fetch(c.req.raw)";
// What `receiver.fetch` logs when the platform's waitUntil throws (Workers' `ctx.waitUntil` called without its `ctx`).
const WAIT_UNTIL_FIX =
  'pass the platform context itself so that waitUntil keeps its `this`, e.g. receiver.fetch(request, ctx), not { waitUntil: ctx.waitUntil }';

// What `receiver.fetch` logs on Workers when it was given no ExecutionContext to keep queued work alive with.
const NO_WAIT_UNTIL_FIX =
  'pass the ExecutionContext: export default { fetch: (request, env, ctx) => receiver.fetch(request, ctx) }, or export default { fetch: receiver.fetch }';

// The part of Node's ServerResponse a misplaced `receiver.fetch` answers on; no Node module is imported here.
interface NodeResponse {
  readonly headersSent: unknown;
  writeHead(status: number, headers: Readonly<Record<string, string>>): unknown;
  end(body: string): unknown;
}

const isNodeResponse = (value: unknown): value is NodeResponse =>
  typeof (value as Partial<NodeResponse> | null | undefined)?.writeHead === 'function' &&
  typeof (value as Partial<NodeResponse>).end === 'function';

/**
 * `receiver.fetch` over the delivery path: reads the body within the limits, answers, and hands the answer's
 * background work to the platform's `waitUntil` (the third argument's, when Workers call it as a module's handler).
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
  readonly warnOnce: (kind: string, obj: object, msg: string, level?: 'warn' | 'error') => void;
}): (request: Request, platform?: FetchPlatform) => Promise<Response> {
  // Not a Request: said once with the adapter to use, and answered 500 (the sender retries until it is fixed), never
  // a TypeError that Express would answer with its stack and node:http would not answer at all. Where the second
  // argument is Node's response (Express and node:http call the handler with `(req, res)`), the answer is written
  // there, or the request would stay open until the sender gives up.
  const notARequest = (res: unknown): Response => {
    warnOnce(
      'fetch_not_a_request',
      { fix: NOT_A_REQUEST_FIX },
      `workforce-webhooks: receiver.fetch was called with something other than a Web Request (a Node or framework request?), so it answers 500 raw_body_unavailable. Fix: ${NOT_A_REQUEST_FIX}`,
      'error',
    );
    const { status, headers, body } = answers.rawBodyUnavailable;
    if (isNodeResponse(res) && res.headersSent === false) {
      res.writeHead(status, headers);
      res.end(body);
    }
    return toWebResponse(answers.rawBodyUnavailable);
  };

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

  // Workers end a request's timers and I/O with it: work past the answer with no waitUntil never finishes.
  const workLost = (): void => {
    warnOnce(
      'wait_until_missing',
      { fix: NO_WAIT_UNTIL_FIX },
      `workforce-webhooks: receiver.fetch was called on Cloudflare Workers with no ExecutionContext, so queued work ends with the request and deliveries answered 202 are not handled. Fix: ${NO_WAIT_UNTIL_FIX}`,
      'error',
    );
  };

  // `context`: Workers call a module's handler as fetch(request, env, ctx), so `export default { fetch: receiver.fetch }`
  // (or the receiver itself as the default export) gives `env` second and the ExecutionContext third. Without it the
  // 202 would go out and workerd would end the queued work with the request.
  return async (request, platform, context?: FetchPlatform) => {
    // A Node request's `headers` is a plain object; a Hono context has none.
    if (typeof (request as Partial<Request> | null | undefined)?.headers?.get !== 'function')
      return notARequest(platform);
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
    // `background` is read only where it is used: reading it makes its promise. On Workers with nothing to keep it
    // alive, the work is lost, and said.
    const keeper = typeof context?.waitUntil === 'function' ? context : platform;
    if (keeper?.waitUntil !== undefined) {
      const background = response.background;
      if (background !== undefined) keepAlive(keeper, background);
    } else if (ON_WORKERS && response.background !== undefined) workLost();
    return toWebResponse(response);
  };
}
