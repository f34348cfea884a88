// The memory queue and the event loop: a backlog of quick handlers draining never holds up the answer to a delivery.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createMemoryQueue, createReceiver, silentLogger } from 'workforce-webhooks';
import { createNodeHandler } from 'workforce-webhooks/node';
import { createSignedDelivery } from 'workforce-webhooks/testing';

const secret = 'whsec_memory_queue_event_loop_test';
const BACKLOG = 5000;

// A handler's own computing (a synchronous driver's write, a template), a fraction of a millisecond per event.
const compute = (): void => {
  const end = performance.now() + 0.1;
  while (performance.now() < end);
};

describe('a memory queue draining a backlog of quick handlers', () => {
  it.each([
    ['synchronous handlers', true],
    ['async handlers that never wait on I/O', false],
  ])('still answers a new delivery over HTTP before the backlog is done: %s', async (_, sync) => {
    const receiver = createReceiver({
      secret,
      queue: createMemoryQueue({ maxQueued: BACKLOG + 10 }),
      logger: silentLogger,
    });
    onTestFinished(() => receiver.close({ timeoutMs: 10_000 }));
    // The first jobs wait for a dependency that is down; the rest pile up behind them until it comes back.
    let back!: () => void;
    const dependency = new Promise<void>((resolve) => {
      back = resolve;
    });
    let up = false;
    let ran = 0;
    const run = (): void => {
      compute();
      ran++;
    };
    receiver.on(
      'leave.approved',
      sync
        ? () => (up ? run() : dependency.then(run))
        : async () => {
            if (!up) await dependency;
            run();
          },
    );
    const deliveries = await Promise.all(
      Array.from({ length: BACKLOG }, () => createSignedDelivery({ secret, type: 'leave.approved' })),
    );
    for (const delivery of deliveries) {
      const answer = await receiver.handle({
        method: 'POST',
        headers: delivery.headers,
        body: new TextEncoder().encode(delivery.body),
      });
      expect(answer.status).toBe(202);
    }
    const server = createServer(createNodeHandler(receiver));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const { port } = server.address() as AddressInfo;
    const late = await createSignedDelivery({ secret, type: 'leave.approved' });

    up = true;
    back();
    const response = await fetch(`http://127.0.0.1:${port}/`, {
      method: 'POST',
      headers: late.headers,
      body: late.body,
    });
    const ranWhenAnswered = ran;
    expect(response.status).toBe(202);
    // Answered between two turns of the drain, not after it: the event loop was never held for the whole backlog.
    expect(ranWhenAnswered).toBeLessThan(BACKLOG);
    await receiver.close({ timeoutMs: 60_000 });
    expect(ran).toBe(BACKLOG + 1);
  });
});
