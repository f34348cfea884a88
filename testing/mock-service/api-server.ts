// The mock read API on node:http: bearer keys, 300 requests a minute per key, the envelope, the routes.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { attendanceRoutes } from './attendance-routes.js';
import { leaveRoutes } from './leave-routes.js';
import { MockApiFailure, readQuery } from './query.js';
import { createMockRateLimit } from './rate-limit.js';
import type { Route } from './route.js';
import type { MockState } from './state.js';

/** Options of `createApiServer`. */
export interface ApiServerOptions {
  readonly state: MockState;
  /** Requests a key may make per `rateLimitWindowMs`, more than 0; default 300 (spec "Limits"). */
  readonly rateLimit?: number;
  readonly rateLimitWindowMs?: number;
  /** The clock, in milliseconds like `Date.now`. */
  readonly now?: () => number;
  /** `YYYY-MM-DD`: the default `Year` and the year of balances. */
  readonly today: () => string;
}

const routes: readonly Route[] = [...leaveRoutes, ...attendanceRoutes];

/**
 * An HTTP server answering the spec's ten Leave and Attendance endpoints over `state` (not yet listening).
 * @example
 * createApiServer({ state, today: () => '2026-06-15' }).listen(0, '127.0.0.1');
 */
export function createApiServer({
  state,
  rateLimit = 300,
  rateLimitWindowMs = 60_000,
  now = Date.now,
  today,
}: ApiServerOptions): Server {
  // With none allowed, every call would be refused with a Retry-After of NaN.
  if (!(rateLimit > 0))
    throw new RangeError(
      `workforce-webhooks mock: rateLimit must be a number of requests a minute above 0 (Infinity for no limit), got ${String(rateLimit)}`,
    );
  const limiter = createMockRateLimit({ limit: rateLimit, windowMs: rateLimitWindowMs, now });

  const answer = (
    req: IncomingMessage,
  ): { status: number; headers?: Record<string, string>; data: unknown } => {
    const url = new URL(req.url ?? '/', 'http://mock.invalid');
    // RFC 9110 section 15.5.6: a 405 names the methods the resource does allow, in an Allow header.
    if (req.method !== 'GET')
      return {
        status: 405,
        headers: { allow: 'GET' },
        data: failure('method_not_allowed', 'every endpoint uses GET'),
      };
    // The spec does not show the answer to a missing or unknown key: the mock says 401, and 403 for a
    // key without the endpoint's permission, both in the envelope with isSuccessful false.
    const match = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    const key = state.apiKeys.find((k) => k.key === match?.[1]);
    if (key === undefined)
      throw new MockApiFailure(401, 'unauthorized', 'send Authorization: Bearer <API_KEY> with a valid key');
    const retryAfter = limiter.take(key.key);
    if (retryAfter !== undefined) {
      // The spec does not show the status of a rate-limited answer; 429 is the usual one.
      return {
        status: 429,
        headers: { 'retry-after': String(retryAfter) },
        data: failure(
          'rate_limited',
          `more than ${rateLimit} requests a minute; retry after ${retryAfter} s`,
        ),
      };
    }
    for (const route of routes) {
      const found = route.pattern.exec(url.pathname);
      if (found === null) continue;
      if (!key.permissions.includes(route.permission)) {
        throw new MockApiFailure(403, 'forbidden', `this key lacks the permission ${route.permission}`);
      }
      const ctx = {
        state,
        organizationId: key.organizationId,
        query: readQuery(url.searchParams),
        id: found[1]?.toLowerCase(),
        today: today(),
      };
      return {
        status: 200,
        data: { isSuccessful: true, code: '00', message: 'Success', data: route.handle(ctx) },
      };
    }
    throw new MockApiFailure(404, 'not_found', `no endpoint ${url.pathname}`);
  };

  return createServer((req: IncomingMessage, res: ServerResponse) => {
    let result: ReturnType<typeof answer>;
    try {
      result = answer(req);
    } catch (error) {
      result =
        error instanceof MockApiFailure
          ? { status: error.status, data: failure(error.code, error.message) }
          : { status: 500, data: failure('internal_error', String(error)) };
    }
    res.writeHead(result.status, { 'content-type': 'application/json; charset=utf-8', ...result.headers });
    res.end(JSON.stringify(result.data));
  });
}

function failure(code: string, message: string): object {
  return { isSuccessful: false, code, message, data: null };
}
