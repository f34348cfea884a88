// Retry-After as delay-seconds or an HTTP date in any of RFC 9110's three forms; anything else ('1.5', which
// Date.parse reads as a day in 2001) waits the documented one second, not nothing.
import { describe, expect, it } from 'vitest';
import { createApiClient } from 'workforce-webhooks/api';
import { envelope, loopback, page } from './loopback.js';

/** What the client waited after one 429 carrying `value`, with the clock at `now`. */
async function waitsFor(value: string, now = Date.parse('2026-06-15T12:00:00Z')): Promise<number[]> {
  const server = await loopback((_, res, index) =>
    index === 0 ? envelope(res, 429, null, { 'retry-after': value }) : envelope(res, 200, page([])),
  );
  try {
    const sleeps: number[] = [];
    const api = createApiClient({
      apiKey: 'wf_key',
      baseUrl: server.baseUrl,
      rateLimit: false,
      now: () => now,
      sleep: async (ms) => {
        sleeps.push(ms);
      },
    });
    await api.leave.listTypes();
    return sleeps;
  } finally {
    await server.close();
  }
}

describe('RFC 9110 section 5.6.7: a recipient accepts all three forms of HTTP date', () => {
  it.each([
    ['an IMF-fixdate', 'Mon, 15 Jun 2026 12:00:30 GMT'],
    ['an RFC 850 date', 'Monday, 15-Jun-26 12:00:30 GMT'],
    ['an asctime date', 'Mon Jun 15 12:00:30 2026'],
  ])('waits out %s 30 s ahead', async (_, value) => {
    expect(await waitsFor(value)).toEqual([30_000]);
  });

  it('reads an asctime day padded with a space', async () => {
    expect(await waitsFor('Mon Jun  1 12:00:30 2026', Date.parse('2026-06-01T12:00:00Z'))).toEqual([30_000]);
  });

  it('reads an RFC 850 year more than 50 years ahead as the past one: a date gone by waits nothing', async () => {
    expect(await waitsFor('Sunday, 06-Nov-94 08:49:37 GMT')).toEqual([0]);
  });
});

describe('an unreadable Retry-After waits the documented one second', () => {
  it.each([
    '1.5',
    '-1',
    '0.5',
    'Mon, 15 Jun 2026 12:00:30 UTC',
    'Mon Jun 1 12:00:30 2026',
    'Monday, 31-Jun-26 12:00:30 GMT',
    '2026-06-15T12:00:30Z',
  ])('Retry-After: %s', async (value) => {
    expect(await waitsFor(value)).toEqual([1000]);
  });
});
