// A bulk replay or discard given an onProgress that is not a function: refused before any letter is touched.
import { describe, expect, it } from 'vitest';
import {
  ConfigurationError,
  createMemoryQueue,
  discardDeadLetters,
  type EventQueue,
  type QueuedEvent,
  replayDeadLetters,
  silentLogger,
} from 'workforce-webhooks';
import { queuedEvent } from '../contract/queue-suite.js';

const LETTERS = 30;

// A started memory queue whose every attempt fails at once, holding `LETTERS` dead letters; `runs` counts attempts.
async function queueWithLetters(): Promise<{ queue: EventQueue; runs: () => number }> {
  let runs = 0;
  const queue = createMemoryQueue({ attempts: 1, maxQueued: 2 * LETTERS });
  queue.start({
    logger: silentLogger,
    process: async () => {
      runs++;
      throw new Error('down');
    },
    onDeadLetter: async () => {},
  });
  const events: QueuedEvent[] = Array.from({ length: LETTERS }, () => queuedEvent());
  for (const event of events) await queue.enqueue(event);
  await expect.poll(async () => (await queue.counts?.())?.deadLetters).toBe(LETTERS);
  return { queue, runs: () => runs };
}

describe('bulk operations on the memory queue given an onProgress that is not a function', () => {
  // What `{ onProgress: verbose && report }` gives when verbose is off, and other slips from JavaScript.
  it.each([false, 0, 'log', {}])('refuses %j, replaying and discarding no letter', async (given) => {
    const { queue, runs } = await queueWithLetters();
    const onProgress = given as unknown as () => void;
    await expect(replayDeadLetters(queue, {}, { onProgress })).rejects.toThrow(ConfigurationError);
    await expect(discardDeadLetters(queue, {}, { onProgress })).rejects.toThrow(
      /onProgress must be a function/,
    );
    await queue.close({ timeoutMs: 5000 });
    expect(runs()).toBe(LETTERS);
    expect((await queue.counts?.())?.deadLetters).toBe(LETTERS);
  });
});
