// createMockService refuses, with the fix, options no delivery could be made with or that would pass an endpoint the
// service fails (a wait for an answer past the spec's 10 s), and leaves nothing listening when it does.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createMockService } from 'workforce-webhooks/testing';

/** A port nothing listens on right now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('createMockService options', () => {
  it('refuses a wait for an answer longer than the service gives (spec "Limits": 10 seconds)', async () => {
    await expect(createMockService({ today: '2026-06-15', timeoutMs: 30_000 })).rejects.toThrow(
      'workforce-webhooks mock: timeoutMs must be a whole number of ms from 1 to 10000 (the service waits at most 10 s for an answer, then retries: a longer wait would pass an endpoint it fails), got 30000',
    );
  });

  it('refuses a wait no timer can make, rather than failing every attempt on it', async () => {
    for (const timeoutMs of [0, -1, 1.5, Number.NaN]) {
      await expect(createMockService({ today: '2026-06-15', timeoutMs })).rejects.toThrow(
        /timeoutMs must be a whole number of ms from 1 to 10000/,
      );
    }
  });

  it('refuses a retry wait no timer can make, rather than retrying at once', async () => {
    for (const wait of [-1, Number.NaN, Number.POSITIVE_INFINITY, 30 * 86_400_000]) {
      await expect(
        createMockService({ today: '2026-06-15', retryScheduleMs: [60_000, wait] }),
      ).rejects.toThrow(`retryScheduleMs must be a list of waits in ms from 0 to 2147483647, got ${wait}`);
    }
  });

  it('refuses a rate limit of no request at all', async () => {
    for (const rateLimit of [0, -5, Number.NaN]) {
      await expect(createMockService({ today: '2026-06-15', rateLimit })).rejects.toThrow(
        `rateLimit must be a number of requests a minute above 0 (Infinity for no limit), got ${rateLimit}`,
      );
    }
  });

  it('leaves the port free when it refuses, and takes the limits themselves', async () => {
    const port = await freePort();
    await expect(createMockService({ today: '2026-06-15', port, timeoutMs: 10_001 })).rejects.toThrow(
      /timeoutMs/,
    );
    await expect(createMockService({ today: '2026-06-15', port, rateLimit: 0 })).rejects.toThrow(/rateLimit/);
    const mock = await createMockService({
      today: '2026-06-15',
      port,
      timeoutMs: 10_000,
      retryScheduleMs: [0, 2 ** 31 - 1],
      rateLimit: Number.POSITIVE_INFINITY,
    });
    expect(mock.baseUrl).toBe(`http://127.0.0.1:${port}`);
    await mock.close();
    const quick = await createMockService({ today: '2026-06-15', timeoutMs: 1, retryScheduleMs: [] });
    await quick.close();
  });
});
