// The client keeps to 300 requests a minute per key and waits out Retry-After, a bounded number of times.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError, createApiClient } from 'workforce-webhooks/api';
import { createMockService, type MockService } from 'workforce-webhooks/testing';
import { envelope, loopback, page } from './loopback.js';

// One injected clock for the mock and the client; the client's sleep moves it instead of waiting.
let clock: number;
// One clock function per test: clients share a limit only when they share the key, the base URL and the clock.
let now: () => number;
let mock: MockService;
let statuses: number[];
let sleeps: number[];
const sleep = async (ms: number) => {
  sleeps.push(ms);
  clock += ms;
};
const recording: typeof fetch = async (input, init) => {
  const response = await fetch(input, init);
  statuses.push(response.status);
  return response;
};

beforeEach(async () => {
  clock = Date.parse('2026-06-15T12:00:00Z');
  now = () => clock;
  statuses = [];
  sleeps = [];
  mock = await createMockService({ today: '2026-06-15', now: () => clock });
});
afterEach(() => mock.close());

describe('rate limit', () => {
  it('waits on its own before the 301st request of a minute, so the service never has to refuse', async () => {
    const api = createApiClient({
      apiKey: mock.apiKeys.full,
      baseUrl: mock.baseUrl,
      fetch: recording,
      now: () => clock,
      sleep,
    });
    for (let i = 0; i < 301; i++) await api.leave.listTypes({ pageSize: 1 });
    expect(sleeps).toEqual([60_000]);
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
  });

  it('on a rate-limited answer waits for Retry-After and retries', async () => {
    for (let i = 0; i < 300; i++) {
      await fetch(`${mock.baseUrl}/v1/leavetype/list`, {
        headers: { authorization: `Bearer ${mock.apiKeys.full}` },
      });
    }
    clock += 45_000;
    const api = createApiClient({
      apiKey: mock.apiKeys.full,
      baseUrl: mock.baseUrl,
      fetch: recording,
      now: () => clock,
      sleep,
    });
    const types = await api.leave.listTypes();
    expect(types.totalRecords).toBe(5);
    expect(statuses).toEqual([429, 200]);
    expect(sleeps).toEqual([15_000]);
  });

  it('gives up with ApiError rate_limited after maxRetries', async () => {
    for (let i = 0; i < 300; i++) {
      await fetch(`${mock.baseUrl}/v1/leavetype/list`, {
        headers: { authorization: `Bearer ${mock.apiKeys.full}` },
      });
    }
    const stuck = async (ms: number) => {
      sleeps.push(ms); // the clock does not move: the limit never lifts
    };
    const api = createApiClient({
      apiKey: mock.apiKeys.full,
      baseUrl: mock.baseUrl,
      fetch: recording,
      maxRetries: 2,
      sleep: stuck,
    });
    const error = await api.leave.listTypes().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: 'rate_limited', status: 429 });
    expect(statuses).toEqual([429, 429, 429]);
    expect(sleeps).toEqual([60_000, 60_000]);
  });

  it('passes an aborted signal through', async () => {
    const api = createApiClient({ apiKey: mock.apiKeys.full, baseUrl: mock.baseUrl });
    await expect(api.leave.listTypes({}, { signal: AbortSignal.abort() })).rejects.toThrow();
  });

  it.each([
    ['requests: 0', { requests: 0 }],
    ['requests: NaN', { requests: Number.NaN }],
    ['requests: 1.5', { requests: 1.5 }],
    ['requests: Infinity', { requests: Number.POSITIVE_INFINITY }],
    ['intervalMs: NaN', { intervalMs: Number.NaN }],
    ['intervalMs: 0', { intervalMs: 0 }],
    ['intervalMs: 2^31', { intervalMs: 2 ** 31 }],
  ])('refuses rateLimit %s when the client is made, not with calls that wait for ever', (_, rateLimit) => {
    expect(() => createApiClient({ apiKey: 'wf_key', baseUrl: 'http://127.0.0.1:9', rateLimit })).toThrow(
      TypeError,
    );
    expect(() => createApiClient({ apiKey: 'wf_key', baseUrl: 'http://127.0.0.1:9', rateLimit })).toThrow(
      /^workforce-webhooks: rateLimit\.(requests|intervalMs) must be/,
    );
  });

  it('counts every request the service sees: a redirect is answered as an error, never followed outside the limit', async () => {
    // A proxy in front of the service that sends every path to its canonical form with a same-origin 308.
    const server = await loopback((req, res) => {
      if (req.url?.startsWith('/canonical/')) return envelope(res, 200, page([]));
      res.writeHead(308, { location: `/canonical${req.url}` });
      res.end();
    });
    try {
      const api = createApiClient({
        apiKey: 'wf_key',
        baseUrl: server.baseUrl,
        rateLimit: { requests: 5 },
        now,
        sleep,
      });
      for (let i = 0; i < 5; i++) {
        await expect(api.leave.listTypes()).rejects.toMatchObject({
          name: 'ApiError',
          code: 'redirected',
          status: 308,
          endpoint: 'GET /v1/leavetype/list',
        });
      }
      // Five calls, five slots of the limit, five requests: nothing the service counted went unseen.
      expect(server.requests.map((url) => url.pathname)).toEqual(Array(5).fill('/v1/leavetype/list'));
      expect(sleeps).toEqual([]);
    } finally {
      await server.close();
    }
  });
});

// Concurrent waiters each move the clock to the end of their own wait, never back.
const concurrentSleep = async (ms: number) => {
  sleeps.push(ms);
  const until = clock + ms;
  await Promise.resolve();
  clock = Math.max(clock, until);
};

describe('spec "Limits": "Request rate | 300 requests per minute per key | all API calls"', () => {
  it('is one limit for every client of the same key and base URL in the process', async () => {
    await mock.close();
    mock = await createMockService({ today: '2026-06-15', now, rateLimit: 20 });
    const options = {
      apiKey: mock.apiKeys.full,
      baseUrl: mock.baseUrl,
      fetch: recording,
      now,
      sleep: concurrentSleep,
      rateLimit: { requests: 20 },
    };
    // Two modules of one app, say a handler and a cron job, each with its own client.
    const handler = createApiClient(options);
    const cron = createApiClient(options);
    await Promise.all([
      ...Array.from({ length: 15 }, () => handler.leave.listTypes({ pageSize: 1 })),
      ...Array.from({ length: 15 }, () => cron.leave.listTypes({ pageSize: 1 })),
    ]);
    expect(statuses).toHaveLength(30);
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    expect(sleeps.length).toBeGreaterThan(0);

    // Another key has its own limit: it is not held back by this one's.
    sleeps = [];
    const other = createApiClient({ ...options, apiKey: mock.apiKeys.leave });
    await Promise.all(Array.from({ length: 20 }, () => other.leave.listTypes({ pageSize: 1 })));
    expect(sleeps).toEqual([]);
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
  });

  it('counts a request until an interval after its answer, so a slow request never lets the service see 301', async () => {
    await mock.close();
    mock = await createMockService({ today: '2026-06-15', now, rateLimit: 20 });
    let calls = 0;
    // The first request takes 5 s to reach the service; the others arrive at once.
    const slowFirst: typeof fetch = async (input, init) => {
      if (calls++ === 0) clock += 5_000;
      return recording(input, init);
    };
    const api = createApiClient({
      apiKey: mock.apiKeys.full,
      baseUrl: mock.baseUrl,
      fetch: slowFirst,
      now,
      sleep,
      rateLimit: { requests: 20 },
    });
    for (let i = 0; i < 21; i++) await api.leave.listTypes({ pageSize: 1 });
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    // The 21st waited for the window of the first one's answer, not of its start.
    expect(sleeps).toEqual([60_000]);
  });

  it('never causes its own 429 with many calls at once and requests that take time to arrive', async () => {
    await mock.close();
    mock = await createMockService({ today: '2026-06-15', now, rateLimit: 20 });
    // Each request takes 10 ms to reach the service, one after the other.
    const slowLink: typeof fetch = async (input, init) => {
      clock += 10;
      return recording(input, init);
    };
    const api = createApiClient({
      apiKey: mock.apiKeys.full,
      baseUrl: mock.baseUrl,
      fetch: slowLink,
      now,
      sleep: concurrentSleep,
      rateLimit: { requests: 20 },
    });
    await Promise.all(Array.from({ length: 45 }, () => api.leave.listTypes({ pageSize: 1 })));
    expect(statuses).toHaveLength(45);
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
  });
});

describe('spec "Errors": "the answer carries a Retry-After header telling how long to wait"', () => {
  const fast = async (ms: number) => {
    sleeps.push(ms);
  };

  it.each([503, 400, 500])('honours Retry-After on a %i answer, then succeeds', async (status) => {
    const server = await loopback((_, res, index) =>
      index === 0 ? envelope(res, status, null, { 'retry-after': '2' }) : envelope(res, 200, page([])),
    );
    try {
      const api = createApiClient({ apiKey: 'wf_key', baseUrl: server.baseUrl, sleep: fast });
      expect((await api.leave.listTypes()).totalRecords).toBe(0);
      expect(server.requests).toHaveLength(2);
      expect(sleeps).toEqual([2_000]);
    } finally {
      await server.close();
    }
  });

  it('stops after maxRetries with ApiError rate_limited and the last status', async () => {
    const server = await loopback((_, res) => envelope(res, 503, null, { 'retry-after': '1' }));
    try {
      const api = createApiClient({ apiKey: 'wf_key', baseUrl: server.baseUrl, sleep: fast, maxRetries: 2 });
      await expect(api.leave.listTypes()).rejects.toMatchObject({
        name: 'ApiError',
        code: 'rate_limited',
        status: 503,
        endpoint: 'GET /v1/leavetype/list',
      });
      expect(server.requests).toHaveLength(3);
      expect(sleeps).toEqual([1_000, 1_000]);
    } finally {
      await server.close();
    }
  });

  it('fails at once when Retry-After is longer than maxRetryAfterMs', async () => {
    const server = await loopback((_, res) => envelope(res, 503, null, { 'retry-after': '120' }));
    try {
      const api = createApiClient({ apiKey: 'wf_key', baseUrl: server.baseUrl, sleep: fast });
      await expect(api.leave.listTypes()).rejects.toMatchObject({ code: 'rate_limited', status: 503 });
      expect(server.requests).toHaveLength(1);
      expect(sleeps).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it.each([
    ['maxRetryAfterMs', 2 ** 32],
    ['maxRetryAfterMs', Number.POSITIVE_INFINITY],
    ['maxRetryAfterMs', Number.NaN],
    ['maxRetryAfterMs', -1],
    ['maxRetries', -1],
    ['maxRetries', 1.5],
    ['maxRetries', Number.NaN],
    ['maxRetries', Number.POSITIVE_INFINITY],
  ])('refuses %s %s when the client is made', (option, value) => {
    // A wait past a timer's range (2^31 - 1 ms) would end at once: every long Retry-After would be retried at once.
    expect(() =>
      createApiClient({ apiKey: 'wf_key', baseUrl: 'http://127.0.0.1:9', [option]: value }),
    ).toThrow(new RegExp(`^workforce-webhooks: createApiClient ${option} must be`));
  });

  it("ends a Retry-After wait at once on the caller's abort, with the caller's reason", async () => {
    const controller = new AbortController();
    const reason = new Error('shutting down');
    const server = await loopback((_, res) => {
      envelope(res, 429, null, { 'retry-after': '30' });
      setTimeout(() => controller.abort(reason), 20); // while the client waits out the 30 s, on its real timer
    });
    try {
      const api = createApiClient({ apiKey: 'wf_key', baseUrl: server.baseUrl, rateLimit: false });
      await expect(api.leave.listTypes({}, { signal: controller.signal })).rejects.toBe(reason);
      expect(server.requests).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  it('does not retry a failure without Retry-After', async () => {
    const server = await loopback((_, res) => envelope(res, 500, null));
    try {
      const api = createApiClient({ apiKey: 'wf_key', baseUrl: server.baseUrl, sleep: fast });
      await expect(api.leave.listTypes()).rejects.toMatchObject({ code: 'failed_500', status: 500 });
      expect(server.requests).toHaveLength(1);
    } finally {
      await server.close();
    }
  });
});
