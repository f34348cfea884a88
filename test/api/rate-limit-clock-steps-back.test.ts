// The limit's window is measured on the wall clock, which can step back (an NTP correction, a VM restored from a
// snapshot): a full window then waits at most one interval, never the size of the step.
import { describe, expect, it } from 'vitest';
import { createApiClient } from 'workforce-webhooks/api';
import { envelope, loopback, page } from './loopback.js';

describe('spec "Limits": 300 requests a minute, and a wait for a slot of at most that minute', () => {
  it('a clock stepped back an hour while the window is full waits one interval, not an hour and one', async () => {
    const server = await loopback((_, res) => envelope(res, 200, page([])));
    try {
      let clock = Date.parse('2026-06-15T12:00:00Z');
      const sleeps: number[] = [];
      const api = createApiClient({
        apiKey: 'wf_key',
        baseUrl: server.baseUrl,
        rateLimit: { requests: 2 },
        now: () => clock,
        sleep: async (ms) => {
          sleeps.push(ms);
          clock += ms;
        },
      });
      await api.leave.listTypes();
      await api.leave.listTypes();
      expect(sleeps).toEqual([]);
      clock -= 3_600_000;
      await api.leave.listTypes();
      // Both requests count as answered just now: the third still waits for the window, so the service never
      // sees three in a minute, and no longer than the window.
      expect(sleeps).toEqual([60_000]);
      expect(server.requests).toHaveLength(3);
    } finally {
      await server.close();
    }
  });
});
