// The mock's rate limit window slides in real time too: a `now` held still (for stable event times) does not refuse
// every call after the limit for ever, and a clock a test moves forward still skips the wait.
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createApiClient } from 'workforce-webhooks/api';
import { createApiServer } from '../../testing/mock-service/api-server.js';
import { createFixtures, FIXTURE_KEYS } from '../../testing/mock-service/fixtures.js';
import { createMockRateLimit } from '../../testing/mock-service/rate-limit.js';

const FIXED = Date.parse('2026-06-15T12:00:00Z');
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

describe('the mock read API rate limit', () => {
  it('lets calls through again once the window has passed in real time, with the clock held still', async () => {
    // A window of 200 ms so the test need not wait a minute; Retry-After rounds it up to 1 s.
    const server = createApiServer({
      state: createFixtures('2026-06-15'),
      rateLimit: 2,
      rateLimitWindowMs: 200,
      now: () => FIXED,
      today: () => '2026-06-15',
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanup.push(() => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    });
    const statuses: number[] = [];
    const recording: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      statuses.push(response.status);
      return response;
    };
    const api = createApiClient({
      apiKey: FIXTURE_KEYS.full,
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      // Only the service's limit: the client waits out its Retry-After (1 s) for real.
      rateLimit: false,
      fetch: recording,
    });
    for (let i = 0; i < 3; i++) expect((await api.leave.listTypes()).totalRecords).toBe(5);
    expect(statuses).toEqual([200, 200, 429, 200]);
  });

  it('a call leaves the window on whichever clock passes it first; Retry-After is on the mock clock', () => {
    let clock = FIXED;
    let real = 0;
    const limit = createMockRateLimit({ limit: 1, windowMs: 60_000, now: () => clock, elapsed: () => real });
    expect(limit.take('k')).toBeUndefined();
    expect(limit.take('k')).toBe(60);
    // The mock clock moves: the wait it gives shrinks, and the call leaves once it has moved a minute.
    clock += 45_000;
    expect(limit.take('k')).toBe(15);
    clock += 15_000;
    expect(limit.take('k')).toBeUndefined();
    // Held still, the real clock alone lets the next call through a minute later.
    expect(limit.take('k')).toBe(60);
    real += 59_999;
    expect(limit.take('k')).toBe(60);
    real += 1;
    expect(limit.take('k')).toBeUndefined();
    // Keys are counted apart.
    expect(limit.take('other')).toBeUndefined();
  });
});
