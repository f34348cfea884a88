// mock.unsubscribe(id): a removed endpoint gets nothing more, retries of its failed deliveries included, so
// settled() does not wait for them; the other endpoints' retries go on.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createMockService, type MockServiceOptions } from 'workforce-webhooks/testing';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

/** A subscriber on loopback answering 500 to everything, and how many deliveries it got. */
async function failing(): Promise<{ url: string; count: () => number }> {
  let count = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      count++;
      res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, count: () => count };
}

async function mockService(options: MockServiceOptions) {
  const mock = await createMockService({ today: '2026-06-15', ...options });
  cleanup.push(() => mock.close());
  return mock;
}

// A hang shows as this rather than as the test's own time limit; generous, the machine is shared.
const within = <T>(work: Promise<T>, what: string): Promise<T> =>
  Promise.race([
    work,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`${what} did not end within 15 s`)), 15_000).unref(),
    ),
  ]);

describe('mock.unsubscribe()', () => {
  it('drops the retries of the removed endpoint only; the others are retried to the end of the schedule', async () => {
    const mock = await mockService({ retryScheduleMs: [20, 20, 20] });
    const [removed, kept] = [await failing(), await failing()];
    // The removed one last: its first attempt ends the emission, so no retry of it can come before unsubscribe().
    mock.subscribe(kept.url);
    const subscription = mock.subscribe(removed.url);
    const { attempts } = await mock.sendTest();
    expect(attempts.map((a) => [a.status, a.retryInMs])).toEqual([
      [500, 20],
      [500, 20],
    ]);
    expect(mock.unsubscribe(subscription.id)).toBe(true);
    expect(mock.unsubscribe(subscription.id)).toBe(false);
    await within(mock.settled(), 'settled()');
    expect({ removed: removed.count(), kept: kept.count() }).toEqual({ removed: 1, kept: 4 });
    expect(mock.deliveries.filter((d) => d.subscriptionId === subscription.id)).toHaveLength(1);
  });

  it('lets settled() resolve at once rather than after a retry an hour away', async () => {
    const mock = await mockService({ retryScheduleMs: [3_600_000] });
    const endpoint = await failing();
    const { id } = mock.subscribe(endpoint.url);
    await mock.sendTest();
    mock.unsubscribe(id);
    await within(mock.settled(), 'settled()');
    expect(endpoint.count()).toBe(1);
  });

  it('sends nothing to an endpoint removed in the tick of the emission', async () => {
    const mock = await mockService({ retryScheduleMs: [] });
    const endpoint = await failing();
    const { id } = mock.subscribe(endpoint.url);
    const emission = mock.sendTest();
    mock.unsubscribe(id);
    expect((await emission).attempts).toEqual([]);
    expect(endpoint.count()).toBe(0);
  });
});
