// A call that ends rate_limited says why it did not wait: the retries ran out, or the wait asked for is longer than
// the client was told to wait (maxRetryAfterMs), which a retry count cannot explain.
import { describe, expect, it } from 'vitest';
import { ApiError, createApiClient } from 'workforce-webhooks/api';
import { envelope, loopback } from './loopback.js';

describe('ApiError rate_limited names the bound that ended the call', () => {
  it('a Retry-After longer than maxRetryAfterMs, refused at once, says so', async () => {
    const server = await loopback((_, res) => envelope(res, 429, null, { 'retry-after': '120' }));
    try {
      const api = createApiClient({ apiKey: 'wf_key', baseUrl: server.baseUrl, rateLimit: false });
      const error = await api.leave.listTypes().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({ code: 'rate_limited', status: 429 });
      expect((error as Error).message).toMatch(
        /Retry-After: 120 is longer than maxRetryAfterMs \(60000 ms\); raise maxRetryAfterMs to wait it out$/,
      );
      expect((error as Error).message).not.toContain('retries');
      expect(server.requests).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  it('retries run out: says how many, and the last Retry-After', async () => {
    const server = await loopback((_, res) => envelope(res, 429, null, { 'retry-after': '1' }));
    try {
      const api = createApiClient({
        apiKey: 'wf_key',
        baseUrl: server.baseUrl,
        rateLimit: false,
        maxRetries: 2,
        sleep: async () => {},
      });
      const error = await api.leave.listTypes().catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'rate_limited', status: 429 });
      expect((error as Error).message).toMatch(/still limited after 2 retries \(Retry-After: 1\)$/);
      expect(server.requests).toHaveLength(3);
    } finally {
      await server.close();
    }
  });
});
