// The memory queue's jobs run in the queue's own async context: a handler never sees the AsyncLocalStorage of
// another delivery's request (a logger's request id, OpenTelemetry's active span), whichever request or job woke the
// queue up.
import { AsyncLocalStorage } from 'node:async_hooks';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createMemoryQueue, createReceiver } from 'workforce-webhooks';
import { signedLeave, until } from '../support/ordering-scenario.js';

const secret = 'whsec_memory_queue_context';

describe("the memory queue's handlers and the requests' async context", () => {
  it("never run in another request's context: queued in one turn, or started as an earlier job ends", async () => {
    const request = new AsyncLocalStorage<string>();
    const receiver = createReceiver({ secret, queue: createMemoryQueue({ concurrency: 1 }) });
    onTestFinished(() => receiver.close());
    const seen = new Map<string, string | undefined>();
    let releaseFirst!: () => void;
    const firstHeld = new Promise<void>((resolve) => {
      releaseFirst = resolve;
    });
    let firstStarted = false;
    receiver.on('leave.*', async (event) => {
      const key = (event.data as { leaveRequestId: string }).leaveRequestId;
      seen.set(key, request.getStore());
      if (key !== 'first') return;
      firstStarted = true;
      await firstHeld;
    });
    const deliveries = await Promise.all(
      ['first', 'second', 'third'].map((key) => signedLeave(secret, 'leave.approved', 1, key)),
    );
    // Three requests in one turn: the first wakes the queue up; the others wait for the one slot.
    const answers = await Promise.all(
      deliveries.map((delivery, i) => request.run(`request ${i + 1}`, () => receiver.handle(delivery))),
    );
    expect(answers.map((answer) => answer.status)).toEqual([202, 202, 202]);
    await until(() => firstStarted, 'the first job to start');
    expect(seen.size).toBe(1);
    // The second and third start as the first ends, in its continuation.
    request.run('a later request', () => releaseFirst());
    await until(() => seen.size === 3, 'every job');
    expect(Object.fromEntries(seen)).toEqual({ first: undefined, second: undefined, third: undefined });
  });

  it('runs a retried job outside the context of the attempt that failed', async () => {
    const request = new AsyncLocalStorage<string>();
    const receiver = createReceiver({ secret, queue: createMemoryQueue({ backoff: () => 1 }) });
    onTestFinished(() => receiver.close());
    const seen: (string | undefined)[] = [];
    receiver.on('leave.approved', async () => {
      seen.push(request.getStore());
      if (seen.length === 1)
        await request.run('inside the first attempt', () => Promise.reject(new Error('again')));
    });
    const delivery = await signedLeave(secret, 'leave.approved', 1, crypto.randomUUID());
    expect((await request.run('the request', () => receiver.handle(delivery))).status).toBe(202);
    await until(() => seen.length === 2, 'the retry');
    expect(seen).toEqual([undefined, undefined]);
  });
});
