// The client keeps to 300 requests a minute per key and waits out Retry-After, a bounded number of times.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError, createApiClient } from 'workforce-webhooks/api';
import { createMockService, type MockService } from 'workforce-webhooks/testing';

// One injected clock for the mock and the client; the client's sleep moves it instead of waiting.
let clock: number;
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
});
