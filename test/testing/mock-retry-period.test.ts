// The mock's default retries against the spec's "Failed deliveries are retried for two days".
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createMockService, DEFAULT_RETRY_SCHEDULE_MS } from 'workforce-webhooks/testing';

const HOUR = 3_600_000;
const TWO_DAYS = 48 * HOUR;
// Spec "Limits": the answer time; each attempt may take that long before it counts as failed.
const ANSWER_MS = 10_000;

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

describe('default retry period (spec "Limits": webhook retry period two days)', () => {
  it('keeps retrying for close to two days, the last attempt ending within them', () => {
    const waits = DEFAULT_RETRY_SCHEDULE_MS.reduce((a, b) => a + b, 0);
    const attempts = DEFAULT_RETRY_SCHEDULE_MS.length + 1;
    // Within the last hour of the two days: a receiver down for a day and a half still gets its events.
    expect(waits).toBeGreaterThanOrEqual(TWO_DAYS - HOUR);
    // Never past them, even when every attempt waits out the whole answer time.
    expect(waits + attempts * ANSWER_MS).toBeLessThanOrEqual(TWO_DAYS);
    // Each wait at least as long as the one before: a backoff.
    for (const [i, wait] of DEFAULT_RETRY_SCHEDULE_MS.entries())
      expect(wait).toBeGreaterThanOrEqual(DEFAULT_RETRY_SCHEDULE_MS[i - 1] ?? 0);
  });

  it('is the schedule a mock uses when none is given', async () => {
    const server = createServer((_req, res) => res.writeHead(500).end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanup.push(() => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    });
    const mock = await createMockService({ today: '2026-06-15' });
    cleanup.push(() => mock.close());
    mock.subscribe(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`);
    const { attempts } = await mock.sendTest();
    expect(attempts).toMatchObject([{ status: 500, ok: false, retryInMs: DEFAULT_RETRY_SCHEDULE_MS[0] }]);
  });
});
