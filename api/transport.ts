// One GET against the read API: bearer key, client-side limit, Retry-After retries, envelope unwrapped.
import { ApiError } from './errors.js';
import { createRateLimiter, type RateLimiter, type Sleep, sleep as timerSleep } from './limiter.js';

/** Per-call options. */
export interface CallOptions {
  /** Abort the call (pass a handler's `ctx.signal`). */
  readonly signal?: AbortSignal;
}

/** Options of `createTransport` (the transport part of `createApiClient`'s options). */
export interface TransportOptions {
  readonly apiKey: string;
  /** The spec's `{base_url}`; paths such as `/v1/leaverequest/list` are appended to it. */
  readonly baseUrl: string | URL;
  readonly fetch?: typeof fetch;
  /** The client-side limit; default 300 a minute (spec "Limits"). `false` turns it off. */
  readonly rateLimit?: { readonly requests?: number; readonly intervalMs?: number } | false;
  /** How many times a rate-limited call is retried after its `Retry-After`. Default 3. */
  readonly maxRetries?: number;
  /** Longest `Retry-After` the client waits; a longer one fails at once. Default 60 000. */
  readonly maxRetryAfterMs?: number;
  /** The clock, in milliseconds like `Date.now`. */
  readonly now?: () => number;
  readonly sleep?: Sleep;
}

/** Sends one GET and resolves with the envelope's `data`. */
export type Transport = (path: string, query: string, options?: CallOptions) => Promise<unknown>;

/**
 * Builds the function every endpoint goes through.
 * @example
 * const get = createTransport({ apiKey, baseUrl }); await get('/v1/leavetype/list', 'PageSize=5');
 */
export function createTransport({
  apiKey,
  baseUrl,
  fetch: fetchImpl = globalThis.fetch,
  rateLimit = {},
  maxRetries = 3,
  maxRetryAfterMs = 60_000,
  now = Date.now,
  sleep = timerSleep,
}: TransportOptions): Transport {
  if (typeof apiKey !== 'string' || apiKey.trim() === '') {
    throw new TypeError('workforce-webhooks: createApiClient needs an apiKey');
  }
  const base = new URL(String(baseUrl));
  if (!base.pathname.endsWith('/')) base.pathname += '/';
  const limiter: RateLimiter | undefined =
    rateLimit === false ? undefined : createRateLimiter({ ...rateLimit, now, sleep });
  const headers = { authorization: `Bearer ${apiKey}`, accept: 'application/json' };

  return async (path, query, { signal } = {}) => {
    // Relative to the base, so a base with a path prefix (https://host/api) keeps it.
    const url = new URL(path.replace(/^\//, ''), base);
    url.search = query;
    for (let retry = 0; ; retry++) {
      await limiter?.acquire(signal);
      const response = await fetchImpl(url, { headers, signal });
      const retryAfter = response.headers.get('retry-after');
      if (response.status === 429 || (response.status === 503 && retryAfter !== null)) {
        const waitMs = retryAfterMs(retryAfter, now());
        await response.body?.cancel();
        if (retry < maxRetries && waitMs <= maxRetryAfterMs) {
          await sleep(waitMs, signal);
          continue;
        }
        throw new ApiError(
          'rate_limited',
          `still limited after ${retry} retries (Retry-After: ${retryAfter ?? 'none'})`,
          response.status,
        );
      }
      return unwrap(response);
    }
  };
}

async function unwrap(response: Response): Promise<unknown> {
  const text = await response.text();
  let envelope: { isSuccessful?: unknown; code?: unknown; message?: unknown; data?: unknown };
  try {
    envelope = JSON.parse(text);
  } catch {
    throw new ApiError('invalid_response', `the answer is not JSON: ${text.slice(0, 80)}`, response.status);
  }
  if (typeof envelope !== 'object' || envelope === null || typeof envelope.isSuccessful !== 'boolean') {
    throw new ApiError('invalid_response', 'the answer is not the response envelope', response.status);
  }
  if (!envelope.isSuccessful || !response.ok) {
    const code = typeof envelope.code === 'string' ? envelope.code : `http_${response.status}`;
    const message = typeof envelope.message === 'string' ? envelope.message : response.statusText;
    throw new ApiError(code, message, response.status);
  }
  return envelope.data;
}

/** `Retry-After` as seconds or an HTTP date, in milliseconds from now; one second when absent or unreadable. */
function retryAfterMs(value: string | null, now: number): number {
  if (value === null) return 1000;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? 1000 : Math.max(0, at - now);
}
