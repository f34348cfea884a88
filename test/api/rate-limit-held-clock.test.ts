// The client's limit window slides in real time too: a `now` held still (a test's fixed clock) makes a call wait one
// interval for a slot, never for ever.
import { describe, expect, it } from 'vitest';
import { createApiClient } from 'workforce-webhooks/api';
import { envelope, loopback, page } from './loopback.js';

// A hang shows as this rather than as the test's own time limit; generous, the machine is shared.
const within = <T>(work: Promise<T>, what: string): Promise<T> =>
  Promise.race([
    work,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`${what} did not end within 15 s`)), 15_000).unref(),
    ),
  ]);

describe('spec "Limits": 300 requests a minute, on a clock that does not move', () => {
  it('a full window with the clock held still frees its slots once the interval has passed in real time', async () => {
    const server = await loopback((_, res) => envelope(res, 200, page([])));
    try {
      const held = Date.parse('2026-06-15T12:00:00Z');
      const api = createApiClient({
        apiKey: 'wf_key',
        baseUrl: server.baseUrl,
        // A short interval so the real wait is short; the timer sleep is the default one.
        rateLimit: { requests: 2, intervalMs: 200 },
        now: () => held,
      });
      for (let i = 0; i < 4; i++) await within(api.leave.listTypes(), `call ${i + 1}`);
      expect(server.requests).toHaveLength(4);
    } finally {
      await server.close();
    }
  });
});
