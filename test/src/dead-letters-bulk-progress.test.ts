// A bulk replay or discard whose onProgress throws stops there: it rejects with that error once the letters under way
// end, and starts no other letter behind the caller's back.
import { setImmediate as turn } from 'node:timers/promises';
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

const LETTERS = 50;
const CONCURRENCY = 5;

// A started memory queue whose every attempt fails at once, holding `LETTERS` dead letters.
async function queueWithLetters(): Promise<{ queue: EventQueue; runs: () => number }> {
  let runs = 0;
  const queue = createMemoryQueue({ attempts: 1, maxQueued: 2 * LETTERS });
  queue.start({
    logger: silentLogger,
    process: async () => {
      runs++;
      throw new HandlerFailure([new Error('down')], []);
    },
    onDeadLetter: async () => {},
  });
  for (let i = 0; i < LETTERS; i++) await queue.enqueue(queuedEvent());
  await expect.poll(async () => (await queue.counts?.())?.deadLetters).toBe(LETTERS);
  return { queue, runs: () => runs };
}

describe('a bulk operation whose onProgress throws', () => {
  it('discardDeadLetters rejects with that error and drops no letter after it', async () => {
    const { queue } = await queueWithLetters();
    const broken = new Error('the progress bar broke');
    const discarding = discardDeadLetters(
      queue,
      {},
      {
        concurrency: CONCURRENCY,
        // It throws once (a progress bar failing on its first draw, say): the other calls return.
        onProgress: ({ done }) => {
          if (done === 1) throw broken;
        },
      },
    );
    await expect(discarding).rejects.toBe(broken);
    // Work left running behind the rejection would go on within these turns of the event loop.
    for (let i = 0; i < 10; i++) await turn();
    // Only the letters already under way when it threw were dropped.
    expect((await queue.counts?.())?.deadLetters).toBeGreaterThanOrEqual(LETTERS - CONCURRENCY);
    await queue.close({ timeoutMs: 100 });
  });

  it('replayDeadLetters rejects with that error and replays no letter after it', async () => {
    const { queue, runs } = await queueWithLetters();
    const before = runs();
    const broken = new Error('the progress bar broke');
    const replaying = replayDeadLetters(
      queue,
      {},
      {
        concurrency: CONCURRENCY,
        // It throws once (a progress bar failing on its first draw, say): the other calls return.
        onProgress: ({ done }) => {
          if (done === 1) throw broken;
        },
      },
    );
    await expect(replaying).rejects.toBe(broken);
    for (let i = 0; i < 10; i++) await turn();
    await queue.close({ timeoutMs: 1000 });
    expect(runs() - before).toBeLessThanOrEqual(CONCURRENCY);
  });
});
