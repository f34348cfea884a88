// mock.close() stops the sender: no retry after it, even for an attempt still waiting for its answer at close().
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createMockService } from 'workforce-webhooks/testing';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

describe('mock.close() stops the sender', () => {
  it('sends no retry after close(), even for an attempt that was in flight when close() was called', async () => {
    let hits = 0;
    let firstArrived!: () => void;
    const arrived = new Promise<void>((resolve) => {
      firstArrived = resolve;
    });
    const server: Server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        hits++;
        firstArrived();
        // A failing answer that takes a moment: close() is called while the attempt waits for it.
        setTimeout(() => res.writeHead(500).end(), 150);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanup.push(() => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;

    const mock = await createMockService({ today: '2026-06-15', retryScheduleMs: [20, 20, 20] });
    mock.subscribe(url);
    const sent = mock.sendTest();
    await arrived;
    await mock.close();
    await sent;
    // Well past the whole retry schedule.
    await new Promise((resolve) => setTimeout(resolve, 800));

    expect(hits).toBe(1);
    expect(mock.deliveries).toHaveLength(1);
  });
});
