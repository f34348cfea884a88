// mock.close() stops a delivery waiting for its answer at once: recorded as cancelled, never retried, and close()
// resolves only once it has ended.
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createMockService } from 'workforce-webhooks/testing';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

/** An endpoint that takes each request and never answers; `arrived` resolves with the first. */
async function hangingEndpoint(): Promise<{ url: string; arrived: Promise<void>; hits: () => number }> {
  let hits = 0;
  let first!: () => void;
  const arrived = new Promise<void>((resolve) => {
    first = resolve;
  });
  const server = createServer((req) => {
    req.resume();
    req.on('end', () => {
      hits++;
      first();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanup.push(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    arrived,
    hits: () => hits,
  };
}

describe('mock.close() with a delivery in flight', () => {
  it('stops it at once rather than at its 10 s limit, and the emission settles', async () => {
    const { url, arrived } = await hangingEndpoint();
    const mock = await createMockService({ today: '2026-06-15' });
    mock.subscribe(url);
    const sending = mock.sendTest();
    await arrived;
    const closing = Date.now();
    await mock.close();
    const { attempts } = await sending;
    // Wide bound: the attempt's own limit is 10 s.
    expect(Date.now() - closing).toBeLessThan(3000);
    expect(attempts).toHaveLength(1);
  });

  it('records it as cancelled, not as a failure of the endpoint, before close() resolves, and never retries it', async () => {
    const { url, arrived, hits } = await hangingEndpoint();
    const mock = await createMockService({ today: '2026-06-15', retryScheduleMs: [10, 10, 10] });
    mock.subscribe(url);
    const sending = mock.sendTest();
    await arrived;
    await mock.close();
    // Ended before close() resolved: nothing of the mock is left running.
    expect(mock.deliveries).toHaveLength(1);
    expect(mock.deliveries[0]).toMatchObject({
      ok: false,
      cancelled: true,
      error: expect.stringMatching(/^cancelled/),
    });
    expect(mock.deliveries[0]).not.toHaveProperty('retryInMs');
    expect(mock.deliveries[0]!.status).toBeUndefined();
    expect((await sending).attempts[0]).toMatchObject({ cancelled: true });
    await mock.settled();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(hits()).toBe(1);
    expect(mock.deliveries).toHaveLength(1);
  });

  it('an event emitted just before close() is not sent after it', async () => {
    const { url, hits } = await hangingEndpoint();
    const mock = await createMockService({ today: '2026-06-15' });
    mock.subscribe(url);
    const sending = mock.sendTest();
    await mock.close();
    expect((await sending).attempts).toEqual([expect.objectContaining({ cancelled: true })]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(hits()).toBe(0);
  });
});
