// One GET against the read API: bearer key, shared rate limit, deadline, Retry-After retries, envelope unwrapped.
import { ApiError } from './errors.js';
import { createRateLimiter, type RateLimiter, type Sleep, sleep as timerSleep } from './limiter.js';
import { type Read, ShapeError } from './shape.js';

/** Per-call options. */
export interface CallOptions {
  /** Abort the call (pass a handler's `ctx.signal`); combined with the client's `timeoutMs`. */
  readonly signal?: AbortSignal;
}

/** Options of `createTransport` (the transport part of `createApiClient`'s options). */
export interface TransportOptions {
  readonly apiKey: string;
  /** The spec's `{base_url}`; paths such as `/v1/leaverequest/list` are appended to it. */
  readonly baseUrl: string | URL;
  readonly fetch?: typeof fetch;
  /**
   * The client-side limit; default 300 a minute (spec "Limits"), shared by every client of the same key and base
   * URL in this process. Processes sharing a key must split it (e.g. `requests: 100` each for three). `false`
   * turns it off.
   */
  readonly rateLimit?: { readonly requests?: number; readonly intervalMs?: number } | false;
  /** How many times a rate-limited call is retried after its `Retry-After`. Default 3. */
  readonly maxRetries?: number;
  /** Longest `Retry-After` the client waits; a longer one fails at once. Default 60 000. */
  readonly maxRetryAfterMs?: number;
  /** Deadline of each request, answer and body included; `ApiError` `timeout` when it passes. Default 30 000. */
  readonly timeoutMs?: number;
  /** The clock, in milliseconds like `Date.now`. */
  readonly now?: () => number;
  readonly sleep?: Sleep;
}

/** Sends one GET and resolves with the envelope's `data`, read by `read`. */
export type Transport = <T>(
  path: string,
  query: string,
  options: CallOptions | undefined,
  read: Read<T>,
) => Promise<T>;

/**
 * Builds the function every endpoint goes through.
 * @example
 * const get = createTransport({ apiKey, baseUrl }); await get('/v1/leavetype/list', 'PageSize=5', {}, (data) => data);
 */
export function createTransport({
  apiKey,
  baseUrl,
  fetch: fetchImpl = globalThis.fetch,
  rateLimit = {},
  maxRetries = 3,
  maxRetryAfterMs = 60_000,
  timeoutMs = 30_000,
  now = Date.now,
  sleep = timerSleep,
}: TransportOptions): Transport {
  if (typeof apiKey !== 'string' || apiKey.trim() === '') {
    throw new TypeError('workforce-webhooks: createApiClient needs an apiKey');
  }
  // AbortSignal.timeout takes whole milliseconds, and a timer past 2^31 - 1 ms would fire at once.
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0 || timeoutMs > 2 ** 31 - 1) {
    throw new TypeError(
      'workforce-webhooks: createApiClient timeoutMs must be a whole number of milliseconds, 1 to 2147483647',
    );
  }
  const base = new URL(String(baseUrl));
  if (!base.pathname.endsWith('/')) base.pathname += '/';
  // Spec "Limits": 300 a minute per key, so every client of this key (and service) in the process shares one.
  const limiter: RateLimiter | undefined =
    rateLimit === false
      ? undefined
      : createRateLimiter({ ...rateLimit, now, sleep, scope: `${base.href} ${apiKey}` });
  const headers = { authorization: `Bearer ${apiKey}`, accept: 'application/json' };

  return async (path, query, { signal } = {}, read) => {
    // Relative to the base, so a base with a path prefix (https://host/api) keeps it.
    const url = new URL(path.replace(/^\//, ''), base);
    url.search = query;
    const endpoint = `GET ${path}`;
    for (let retry = 0; ; retry++) {
      const release = await limiter?.acquire(signal);
      let answer: { response: Response; text: string };
      try {
        answer = await exchange(url, endpoint, signal);
      } finally {
        release?.();
      }
      const { response, text } = answer;
      const retryAfter = response.headers.get('retry-after');
      // Spec "Errors": the status of a rate-limited answer is not shown, only that it carries Retry-After.
      if (!response.ok && (retryAfter !== null || response.status === 429)) {
        const waitMs = retryAfterMs(retryAfter, now());
        if (retry < maxRetries && waitMs <= maxRetryAfterMs) {
          await sleep(waitMs, signal);
          continue;
        }
        throw new ApiError(
          'rate_limited',
          `still limited after ${retry} retries (Retry-After: ${retryAfter ?? 'none'})`,
          response.status,
          { endpoint },
        );
      }
      const data = unwrap(response, text, endpoint);
      try {
        return read(data, 'data');
      } catch (error) {
        if (!(error instanceof ShapeError)) throw error;
        throw new ApiError('invalid_response', error.message, response.status, {
          endpoint,
          field: error.field,
          cause: error,
        });
      }
    }
  };

  async function exchange(
    url: URL,
    endpoint: string,
    signal: AbortSignal | undefined,
  ): Promise<{ response: Response; text: string }> {
    const deadline = AbortSignal.timeout(timeoutMs);
    try {
      const response = await fetchImpl(url, {
        headers,
        signal: signal === undefined ? deadline : AbortSignal.any([signal, deadline]),
      });
      return { response, text: await response.text() };
    } catch (error) {
      // The caller's own abort stays the caller's: rethrow its reason, as fetch does.
      if (signal?.aborted) throw signal.reason;
      if (deadline.aborted)
        throw new ApiError('timeout', `no answer within ${timeoutMs} ms`, 0, { endpoint, cause: error });
      const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
      const reason = cause?.code ?? cause?.message ?? (error as Error).message;
      throw new ApiError('network_error', `could not reach ${url.origin} (${String(reason)})`, 0, {
        endpoint,
        cause: error,
      });
    }
  }
}

function unwrap(response: Response, text: string, endpoint: string): unknown {
  let envelope: { isSuccessful?: unknown; code?: unknown; message?: unknown; data?: unknown };
  try {
    envelope = JSON.parse(text);
  } catch {
    // A failure from something in front of the service (a proxy's HTML 502) is still a failure of that status.
    const code = response.ok ? 'invalid_response' : `http_${response.status}`;
    throw new ApiError(code, `the answer is not JSON: ${text.slice(0, 80)}`, response.status, { endpoint });
  }
  if (typeof envelope !== 'object' || envelope === null || typeof envelope.isSuccessful !== 'boolean') {
    throw new ApiError('invalid_response', 'the answer is not the response envelope', response.status, {
      endpoint,
      field: 'isSuccessful',
    });
  }
  if (!envelope.isSuccessful || !response.ok) {
    const code = typeof envelope.code === 'string' ? envelope.code : `http_${response.status}`;
    const message = typeof envelope.message === 'string' ? envelope.message : response.statusText;
    throw new ApiError(code, message, response.status, { endpoint });
  }
  return envelope.data;
}

// An IMF-fixdate, the form of HTTP dates (RFC 9110): `Sun, 06 Nov 1994 08:49:37 GMT`.
const HTTP_DATE = /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/;

/** `Retry-After` as seconds or an HTTP date, in milliseconds from now; one second when absent or unreadable. */
function retryAfterMs(value: string | null, now: number): number {
  if (value === null) return 1000;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // Anything else Date.parse reads ('1.5', '-1') is not a date the service would send.
  const at = HTTP_DATE.test(text) ? Date.parse(text) : Number.NaN;
  return Number.isNaN(at) ? 1000 : Math.max(0, at - now);
}
