// Bulk replay and discard (src/dead-letter-bulk.ts) on the memory queue: each names the failure it listed.
import { describe, expect, it } from 'vitest';
import {
  createMemoryQueue,
  discardDeadLetters,
  type EventQueue,
  HandlerFailure,
  replayDeadLetters,
  silentLogger,
} from 'workforce-webhooks';
import { queuedEvent } from '../contract/queue-suite.js';

// A started memory queue whose every attempt fails 5 ms in, so a letter replayed and failing again is newer.
function failingQueue(): EventQueue {
  const queue = createMemoryQueue({ attempts: 1 });
  queue.start({
    logger: silentLogger,
    process: async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      throw new HandlerFailure([new Error('down')], []);
    },
    onDeadLetter: async () => {},
  });
  return queue;
}

describe('bulk operations racing a replay of a letter they listed', () => {
  for (const action of ['discard', 'replay'] as const) {
    it(`${action}DeadLetters leaves the newer failure of a letter replayed meanwhile, outside its filter`, async () => {
      const inner = failingQueue();
      const job = queuedEvent();
      await inner.enqueue(job);
      await expect.poll(async () => (await inner.deadLetters()).items.length).toBe(1);
      const until = (await inner.deadLetters()).items[0]!.failedAt + 1;
      // The bulk call lists the letter, then waits; another operator replays it and it fails again meanwhile.
      let listed!: () => void;
      const reached = new Promise<void>((resolve) => {
        listed = resolve;
      });
      let go!: () => void;
      const held = new Promise<void>((resolve) => {
        go = resolve;
      });
      const hold = async (): Promise<void> => {
        listed();
        await held;
      };
      const racing: Pick<EventQueue, 'deadLetters' | 'replay' | 'discard'> = {
        deadLetters: (query) => inner.deadLetters(query),
        replay: (id, options) => hold().then(() => inner.replay(id, options)),
        discard: (id, options) => hold().then(() => inner.discard(id, options)),
      };
      const bulk =
        action === 'discard'
          ? discardDeadLetters(racing, { until })
          : replayDeadLetters(racing, { until }).then((result) => result.replayed);
      await reached;
      expect(await inner.replay(job.event.id)).toBe(true);
      await expect
        .poll(async () => (await inner.deadLetters()).items[0]?.failedAt ?? 0)
        .toBeGreaterThan(until);
      go();
      expect(await bulk).toBe(0);
      expect((await inner.deadLetters()).items.map((l) => l.event.id)).toEqual([job.event.id]);
      await inner.close({ timeoutMs: 100 });
    });
  }
});
