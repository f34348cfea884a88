// One GET against the read API: bearer key, shared rate limit, deadline, Retry-After retries, envelope unwrapped.
import { type AnswerStart, answerStart } from './answer-start.js';
import { refusedPort } from './bad-port.js';
import { ApiError } from './errors.js';
import { createRateLimiter, type RateLimiter, type Sleep, sleep as timerSleep } from './limiter.js';
import { baseUrlOf, checkOptions } from './options.js';
import { retryAfterMs } from './retry-after.js';
import { type Read, ShapeError } from './shape.js';

/**
 * The largest answer read: far above any page the service sends, so an answer that runs on (a proxy or a wrong
 * baseUrl streaming without end) fails at this size instead of filling memory until the deadline.
 */
const MAX_ANSWER_BYTES = 32 * 1024 * 1024;

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
  /** A fetch of your own (through a proxy, instrumented); `timeoutMs` and your signal hold even if it drops them. */
  readonly fetch?: typeof fetch;
  /**
   * The client-side limit; default 300 a minute (spec "Limits"), shared by every client of the same key and base
   * URL in this process. Processes sharing a key must split it (e.g. `requests: 100` each for three). `false`
   * turns it off.
   */
  readonly rateLimit?: { readonly requests?: number; readonly intervalMs?: number } | false;
  /** How many times a rate-limited call is retried after its `Retry-After`, a whole number. Default 3. */
  readonly maxRetries?: number;
  /** Longest `Retry-After` the client waits; a longer one fails at once. Default 60 000, at most 2 147 483 647. */
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
  checkOptions({ apiKey, timeoutMs, maxRetries, maxRetryAfterMs });
  const base = baseUrlOf(baseUrl);
  // Spec "Limits": 300 a minute per key, so every client of this key (and service) in the process shares one.
  const limiter: RateLimiter | undefined =
    rateLimit === false
      ? undefined
      : createRateLimiter({ ...rateLimit, now, sleep, scope: `${base.href} ${apiKey}` });
  // The platform's fetch would fail every call with a bare "bad port": said once, here, with the fix. A fetch of
  // the caller's own decides for itself.
  const refused = fetchImpl === globalThis.fetch ? refusedPort(base) : undefined;
  if (refused !== undefined)
    throw new TypeError(
      `workforce-webhooks: createApiClient baseUrl's ${refused}: serve the API, or the mock (mock --port), on another port`,
    );
  const headers = { authorization: `Bearer ${apiKey}`, accept: 'application/json' };
  // A gateway's token in the base's query (https://gw.example/workforce?code=abc) goes with every call; resolving a
  // path against the base drops it, so it is merged back, the call's own parameter winning over one of its name.
  const fixed = base.search === '' ? undefined : base.searchParams;

  return async (path, query, { signal } = {}, read) => {
    // Relative to the base, so a base with a path prefix (https://host/api) keeps it.
    const url = new URL(path.replace(/^\//, ''), base);
    url.search = fixed === undefined ? query : withFixed(fixed, query);
    const endpoint = `GET ${path}`;
    for (let retry = 0; ; retry++) {
      const release = await limiter?.acquire(signal);
      let answer: { response: Response } & AnswerStart;
      try {
        answer = await exchange(url, endpoint, signal);
      } finally {
        release?.();
      }
      const { response, text, bytes, truncated } = answer;
      if (isRedirect(response)) throw redirected(response, url, endpoint);
      if (truncated)
        throw new ApiError(
          'invalid_response',
          `the answer is larger than ${MAX_ANSWER_BYTES / 1024 / 1024} MiB; the rest was not read`,
          response.status,
          { endpoint },
        );
      if (isLimited(response)) {
        const retryAfter = response.headers.get('retry-after');
        const waitMs = retryAfterMs(retryAfter, now());
        if (retry < maxRetries && waitMs <= maxRetryAfterMs) {
          await sleep(waitMs, signal);
          continue;
        }
        // Which bound ended the call: a retry count of 0 would not explain a wait refused for its length.
        const why =
          retry < maxRetries
            ? `Retry-After: ${shownRetryAfter(retryAfter)} is longer than maxRetryAfterMs (${maxRetryAfterMs} ms); raise maxRetryAfterMs to wait it out`
            : `still limited after ${retry} retries (Retry-After: ${shownRetryAfter(retryAfter)})`;
        throw new ApiError('rate_limited', why, response.status, { endpoint });
      }
      const data = unwrap(response, text, bytes, endpoint);
      try {
        return read(data, 'data');
      } catch (error) {
        // Whatever reading the answer throws is about the answer, never a crash of the caller's code.
        const shape = error instanceof ShapeError;
        const message = shape
          ? error.message
          : `data could not be read (${error instanceof Error ? error.name : typeof error})`;
        throw new ApiError('invalid_response', message, response.status, {
          endpoint,
          field: shape ? error.field : 'data',
          cause: error,
        });
      }
    }
  };

  async function exchange(
    url: URL,
    endpoint: string,
    signal: AbortSignal | undefined,
  ): Promise<{ response: Response } & AnswerStart> {
    const deadline = AbortSignal.timeout(timeoutMs);
    const ends = signal === undefined ? deadline : AbortSignal.any([signal, deadline]);
    try {
      // The deadline is the client's, not the fetch's good will: a fetch of the caller's own may drop the signal,
      // so the answer is awaited until it aborts, and the body read until then (answerStart cancels it).
      const response = await answerBy(
        ends,
        fetchImpl(url, {
          headers,
          // Every hop would be a request the service counts, outside the rate limit: a 3xx is answered as an error.
          redirect: 'manual',
          signal: ends,
        }),
      );
      // Decided by status and headers alone: a body that stalls would turn the retry, or the redirect's fix, into
      // a timeout, and nothing reads it. Cancelling it drops the connection rather than wait for its end.
      if (isRedirect(response) || isLimited(response)) {
        response.body?.cancel().catch(() => {});
        return { response, text: '', bytes: 0, truncated: false };
      }
      return { response, ...(await answerStart(response, MAX_ANSWER_BYTES, ends)) };
    } catch (error) {
      // The caller's own abort stays the caller's: rethrow its reason, as fetch does.
      if (signal?.aborted) throw signal.reason;
      if (deadline.aborted)
        throw new ApiError('timeout', `no answer within ${timeoutMs} ms`, 0, { endpoint, cause: error });
      // Only a code such as ECONNREFUSED: fetch's own messages may quote the request, headers included.
      const code = errorCode(error);
      throw new ApiError('network_error', `could not reach ${url.origin}${code ? ` (${code})` : ''}`, 0, {
        endpoint,
        // Kept for its stack and code, unless the key shows in it (a custom fetch may quote the headers).
        cause: mentions(error, apiKey) ? undefined : error,
      });
    }
  }
}

/** The answer `sent` resolves with, or a rejection with `signal`'s reason once it aborts, whichever comes first. */
function answerBy(signal: AbortSignal, sent: Promise<Response>): Promise<Response> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      reject(signal.reason);
      // An answer that comes after all is not read: its connection is let go.
      sent.then((late) => late.body?.cancel().catch(() => {})).catch(() => {});
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    sent.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function unwrap(response: Response, text: string, bytes: number, endpoint: string): unknown {
  let envelope: { isSuccessful?: unknown; code?: unknown; message?: unknown; data?: unknown };
  try {
    envelope = JSON.parse(text);
  } catch {
    // A failure from something in front of the service (a proxy's HTML 502) is still a failure of that status.
    const code = response.ok ? 'invalid_response' : `http_${response.status}`;
    // Its type and size, never its bytes: the message reaches logs, and a proxy's page may echo headers or tokens.
    throw new ApiError(
      code,
      `the answer is not JSON (${contentType(response)}, ${bytes} bytes)${response.ok ? ': check that baseUrl is the read API, not a web page in front of it' : ''}`,
      response.status,
      { endpoint },
    );
  }
  if (typeof envelope !== 'object' || envelope === null || typeof envelope.isSuccessful !== 'boolean') {
    // A gateway's JSON of its own on a failure status is that status's failure, as its HTML page would be.
    if (!response.ok)
      throw new ApiError(
        `http_${response.status}`,
        `a failure status without the response envelope (${contentType(response)}, ${bytes} bytes)`,
        response.status,
        { endpoint },
      );
    throw new ApiError('invalid_response', 'the answer is not the response envelope', response.status, {
      endpoint,
      field: 'isSuccessful',
    });
  }
  // The service's code and message only for a failure it reports; a success envelope on a failure status (spec:
  // code 00 is success) is the status's failure.
  if (!envelope.isSuccessful) {
    const code = typeof envelope.code === 'string' ? envelope.code : `http_${response.status}`;
    const message = typeof envelope.message === 'string' ? envelope.message : response.statusText;
    throw new ApiError(code, message, response.status, { endpoint });
  }
  if (!response.ok) {
    const { status } = response;
    throw new ApiError(`http_${status}`, 'a failure status with a success envelope', status, { endpoint });
  }
  return envelope.data;
}

/** A Retry-After as sent when it reads as seconds or an HTTP date; anything else from a peer is not repeated. */
const shownRetryAfter = (value: string | null): string =>
  value === null ? 'none' : /^[\w ,:+-]{1,40}$/.test(value) ? value : 'unreadable';

/** The answer's media type as sent, bounded and printable, for a message; `no content type` without one. */
function contentType(response: Response): string {
  const type = response.headers.get('content-type')?.split(';')[0]?.trim() ?? '';
  // A media type is a token/token: anything else from a misbehaving peer is not repeated.
  return /^[\w.+-]{1,60}\/[\w.+-]{1,60}$/.test(type)
    ? type
    : type === ''
      ? 'no content type'
      : 'an unreadable content type';
}

/**
 * A failure to wait out and retry. Spec "Errors": the status of a rate-limited answer is not shown, only that it
 * carries Retry-After.
 */
const isLimited = (response: Response): boolean =>
  !response.ok && (response.status === 429 || response.headers.has('retry-after'));

/** A 3xx (or, where fetch hides it, an opaque redirect): the read API has none. */
const isRedirect = (response: Response): boolean =>
  response.type === 'opaqueredirect' || (response.status >= 300 && response.status < 400);

/** The base's parameters less those `query` sets, then `query`. */
function withFixed(fixed: URLSearchParams, query: string): string {
  const merged = new URLSearchParams(fixed);
  for (const name of new URLSearchParams(query).keys()) merged.delete(name);
  const kept = merged.toString();
  return kept !== '' && query !== '' ? `${kept}&${query}` : kept || query;
}

/** The error for a redirect: where it points (origin and path only), so the caller can fix `baseUrl`. */
function redirected(response: Response, url: URL, endpoint: string): ApiError {
  let to = '';
  try {
    const target = new URL(response.headers.get('location') ?? '', url);
    if (response.headers.has('location')) to = ` to ${target.origin}${target.pathname}`;
  } catch {
    // An unreadable Location: say only that it redirected.
  }
  return new ApiError(
    'redirected',
    `a redirect${to}; the read API answers at its own URL and the client follows no redirect (each hop is a request the rate limit would not see): set baseUrl to the URL the service answers at`,
    response.status,
    { endpoint },
  );
}

/** A code such as ECONNREFUSED from a fetch error or its cause. */
function errorCode(error: unknown): string | undefined {
  const e = error as { code?: unknown; cause?: { code?: unknown } } | undefined;
  return [e?.cause?.code, e?.code].find(
    (code): code is string => typeof code === 'string' && /^[A-Z][A-Z0-9_]*$/.test(code),
  );
}

/** Whether `secret` appears in the message of `error` or of its causes. */
function mentions(error: unknown, secret: string): boolean {
  for (let e = error, depth = 0; e !== undefined && e !== null && depth < 8; depth++) {
    if (String((e as { message?: unknown }).message).includes(secret)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}
