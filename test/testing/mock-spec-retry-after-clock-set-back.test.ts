// Spec "Errors": a rate-limited answer's Retry-After tells how long to wait. With the mock's clock set back (a test
// making an older event on purpose), the wait it tells is still the real one: at most the window, not the step.
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createApiClient } from 'workforce-webhooks/api';
import { createMockService } from 'workforce-webhooks/testing';
import { createApiServer } from '../../testing/mock-service/api-server.js';
import { createFixtures, FIXTURE_KEYS } from '../../testing/mock-service/fixtures.js';

const START = Date.parse('2026-06-15T12:00:00Z');
const HOUR = 3_600_000;
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

/** A fetch that keeps each answer's status and Retry-After. */
function recording(): { fetch: typeof fetch; seen: [number, string | null][] } {
  const seen: [number, string | null][] = [];
  return {
    seen,
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      seen.push([response.status, response.headers.get('retry-after')]);
      return response;
    },
  };
}

describe('spec "Errors": the Retry-After of the mock read API after its clock was set back', () => {
  it('is at most the minute, so the client waits it out instead of failing on a wait of an hour', async () => {
    let clock = START;
    const mock = await createMockService({ today: '2026-06-15', rateLimit: 1, now: () => clock });
    cleanup.push(() => mock.close());
    const { fetch, seen } = recording();
    // No retry: the one 429 is the answer under test, whatever its Retry-After.
    const api = createApiClient({
      apiKey: mock.apiKeys.full,
      baseUrl: mock.baseUrl,
      rateLimit: false,
      maxRetries: 0,
      fetch,
    });
    await api.leave.listTypes();
    clock -= HOUR;
    await expect(api.leave.listTypes()).rejects.toMatchObject({ code: 'rate_limited', status: 429 });
    expect(seen).toEqual([
      [200, null],
      [429, '60'],
    ]);
  });

  it('a call limited just after the step goes through once the window has passed in real time', async () => {
    let clock = START;
    // A window of 200 ms so the test need not wait a minute; Retry-After rounds it up to 1 s.
    const server = createApiServer({
      state: createFixtures('2026-06-15'),
      rateLimit: 1,
      rateLimitWindowMs: 200,
      now: () => clock,
      today: () => '2026-06-15',
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanup.push(() => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    });
    const { fetch, seen } = recording();
    const api = createApiClient({
      apiKey: FIXTURE_KEYS.full,
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      // Only the service's limit: the client waits out its Retry-After for real.
      rateLimit: false,
      fetch,
    });
    expect((await api.leave.listTypes()).totalRecords).toBe(5);
    clock -= HOUR;
    expect((await api.leave.listTypes()).totalRecords).toBe(5);
    expect(seen).toEqual([
      [200, null],
      [429, '1'],
      [200, null],
    ]);
  });
});
