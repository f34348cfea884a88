// Jobs kept alive by their request (receiver.fetch with a platform's waitUntil, as on Workers or Next's after()): on
// Node too, each waiting job starts from its own request's chain, yet in the queue's async context, and every
// promise handed to waitUntil settles once its job ends.
import { AsyncLocalStorage } from 'node:async_hooks';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createMemoryQueue, createReceiver } from 'workforce-webhooks';
import { signedLeave, until } from '../support/ordering-scenario.js';

const secret = 'whsec_memory_queue_kept_jobs';

describe('the memory queue with jobs kept alive by their request', () => {
  it("runs each waiting job once, never in a request's async context, and settles every kept promise", async () => {
    const request = new AsyncLocalStorage<string>();
    const receiver = createReceiver({ secret, queue: createMemoryQueue({ concurrency: 1 }) });
    onTestFinished(() => receiver.close());
    const seen: [string, string | undefined][] = [];
    let releaseFirst!: () => void;
    const firstHeld = new Promise<void>((resolve) => {
      releaseFirst = resolve;
    });
    receiver.on('leave.*', async (event) => {
      const key = (event.data as { leaveRequestId: string }).leaveRequestId;
      seen.push([key, request.getStore()]);
      if (key === 'first') await firstHeld;
      else await new Promise((resolve) => setTimeout(resolve, 5));
    });
    const kept: Promise<unknown>[] = [];
    const settled: string[] = [];
    const keys = ['first', 'second', 'third', 'fourth'];
    const deliveries = await Promise.all(keys.map((key) => signedLeave(secret, 'leave.approved', 1, key)));
    const answers = await Promise.all(
      deliveries.map((delivery, i) =>
        request.run(`request ${keys[i]}`, () =>
          receiver.fetch(
            new Request('http://localhost/webhooks/workforce', {
              method: 'POST',
              headers: delivery.headers,
              body: delivery.body as Uint8Array<ArrayBuffer>,
            }),
            { waitUntil: (work) => void kept.push(work.then(() => void settled.push(keys[i]!))) },
          ),
        ),
      ),
    );
    expect(answers.map((answer) => answer.status)).toEqual([202, 202, 202, 202]);
    expect(kept).toHaveLength(4);
    await until(() => seen.length === 1, 'the first job to start');
    request.run('a later request', () => releaseFirst());
    await Promise.all(kept);
    // Each once, none in a request's context; in any order (the deliveries are verified concurrently, and on Web
    // Crypto the order they reach the queue is the order their HMACs end).
    expect(seen.map(([key]) => key).sort()).toEqual([...keys].sort());
    expect(seen.map(([, context]) => context)).toEqual(keys.map(() => undefined));
    expect(settled.sort()).toEqual([...keys].sort());
  });
});
