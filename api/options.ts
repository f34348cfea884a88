// Checking createApiClient's options when the client is made, so a mistake fails there, loudly, never at each call.
import { MAX_TIMER_MS } from './limiter.js';

/** The options `checkOptions` looks at (the rate limit is checked by `createRateLimiter`). */
export interface CheckedOptions {
  readonly apiKey: unknown;
  readonly timeoutMs: number;
  readonly maxRetries: number;
  readonly maxRetryAfterMs: number;
}

/**
 * Throws a `TypeError` for a key no header can carry (or sent with its scheme or quotes) or a bound no timer can
 * keep; never echoes the key.
 * @example
 * checkOptions({ apiKey, timeoutMs: 30_000, maxRetries: 3, maxRetryAfterMs: 60_000 });
 */
export function checkOptions({ apiKey, timeoutMs, maxRetries, maxRetryAfterMs }: CheckedOptions): void {
  if (typeof apiKey !== 'string' || apiKey.trim() === '') {
    throw new TypeError('workforce-webhooks: createApiClient needs an apiKey');
  }
  // Two ways a key copied from elsewhere comes dressed; either way the service would answer every call 401.
  if (/^bearer\s/i.test(apiKey)) {
    throw new TypeError(
      'workforce-webhooks: createApiClient apiKey starts with "Bearer ": pass the key alone, the client sends Authorization: Bearer <apiKey> itself',
    );
  }
  if (/^["']|["']$/.test(apiKey)) {
    throw new TypeError(
      'workforce-webhooks: createApiClient apiKey is wrapped in quotes: remove them where the key is set (docker --env-file and some .env loaders keep them as part of the value)',
    );
  }
  // A bearer token is printable ASCII without spaces (RFC 6750 b64token); fetch would refuse anything else at
  // every call, with a message that quotes the header, key included.
  const at = apiKey.search(/[^\x21-\x7e]/);
  if (at !== -1) {
    throw new TypeError(
      `workforce-webhooks: createApiClient apiKey has a character no HTTP header can carry at position ${at} (a space, a line break, a control or non-ASCII character): check how the key is loaded, e.g. a trailing newline from a file`,
    );
  }
  // AbortSignal.timeout takes whole milliseconds, and a timer past 2^31 - 1 ms would fire at once.
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0 || timeoutMs > MAX_TIMER_MS) {
    throw new TypeError(
      `workforce-webhooks: createApiClient timeoutMs must be a whole number of milliseconds, 1 to ${MAX_TIMER_MS}`,
    );
  }
  // Refused rather than capped: the wait for a Retry-After is a timer too, and a bound past its range made every
  // long Retry-After end at once; a bound silently lowered would fail calls the caller meant to wait out.
  if (typeof maxRetryAfterMs !== 'number' || !(maxRetryAfterMs >= 0 && maxRetryAfterMs <= MAX_TIMER_MS)) {
    throw new TypeError(
      `workforce-webhooks: createApiClient maxRetryAfterMs must be a number of milliseconds, 0 to ${MAX_TIMER_MS}`,
    );
  }
  // A count, so that every call ends: Infinity would retry a limited call for ever.
  if (!Number.isSafeInteger(maxRetries) || maxRetries < 0) {
    throw new TypeError('workforce-webhooks: createApiClient maxRetries must be a whole number, 0 or more');
  }
}

/**
 * The base URL with a trailing slash; a `TypeError` that does not echo it when it is not http(s), carries a user
 * or password, or ends in the `/v1` the paths carry.
 * @example
 * baseUrlOf('https://api.example.com/api').href // 'https://api.example.com/api/'
 */
export function baseUrlOf(baseUrl: string | URL): URL {
  let base: URL;
  try {
    base = new URL(String(baseUrl));
  } catch {
    throw new TypeError('workforce-webhooks: createApiClient baseUrl is not a URL');
  }
  if (base.protocol !== 'https:' && base.protocol !== 'http:') {
    throw new TypeError('workforce-webhooks: createApiClient baseUrl must be an http or https URL');
  }
  // fetch refuses such a URL at every call, with a message that quotes it, password included.
  if (base.username !== '' || base.password !== '') {
    throw new TypeError(
      'workforce-webhooks: createApiClient baseUrl must not carry a user or password: the API key is the credential',
    );
  }
  if (!base.pathname.endsWith('/')) base.pathname += '/';
  // Spec "Versioning": every path carries /v1 (/v1/leaverequest/list), so a base ending in it would send each call
  // to /v1/v1/... and every answer would be a 404. The path itself is not repeated: it may hold a gateway's token.
  if (/\/v1\/$/i.test(base.pathname)) {
    throw new TypeError(
      "workforce-webhooks: createApiClient baseUrl ends in /v1, the version every endpoint path already starts with (/v1/leaverequest/list): set baseUrl to the part before /v1, the spec's {base_url}",
    );
  }
  return base;
}
