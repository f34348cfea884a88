// A replay given the platform of the request it is called from (`{ platform: ctx }`): the replayed event's run is handed
// to its waitUntil, and a platform that could keep nothing alive is refused before any letter is touched.
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  ConfigurationError,
  createMemoryQueue,
  type EventQueue,
  HandlerFailure,
  replayDeadLetters,
  silentLogger,
} from 'workforce-webhooks';
import { queuedEvent } from '../contract/queue-suite.js';

// A started memory queue holding `letters` dead letters, whose attempts fail while `failing.on`; `runs` counts them.
async function queueWithLetters(
  letters: number,
): Promise<{ queue: EventQueue; failing: { on: boolean }; runs: string[] }> {
  const failing = { on: true };
  const runs: string[] = [];
  const queue = createMemoryQueue({ attempts: 1 });
  queue.start({
    logger: silentLogger,
    process: async (job) => {
      runs.push(job.event.id);
      await new Promise((resolve) => setTimeout(resolve, 5));
      if (failing.on) throw new HandlerFailure([new Error('down')], []);
    },
    onDeadLetter: async () => {},
  });
  onTestFinished(() => queue.close({ timeoutMs: 1000 }));
  for (let i = 0; i < letters; i++) await queue.enqueue(queuedEvent());
  await expect.poll(async () => (await queue.counts?.())?.deadLetters).toBe(letters);
  runs.length = 0;
  failing.on = false;
  return { queue, failing, runs };
}

const ids = async (queue: EventQueue): Promise<string[]> =>
  (await queue.deadLetters()).items.map((letter) => letter.event.id).sort();

describe('a replay given the platform of its request', () => {
  it('hands the replayed run to its waitUntil, which settles once the handlers have ended', async () => {
    const { queue, runs } = await queueWithLetters(1);
    const [letter] = (await queue.deadLetters()).items;
    const handed: Promise<unknown>[] = [];
    const platform = {
      waitUntil(this: unknown, work: Promise<unknown>) {
        // Called on the platform itself, as Workers' ctx.waitUntil must be.
        expect(this).toBe(platform);
        handed.push(work);
      },
    };
    expect(await queue.replay(letter!.event.id, { failedAt: letter!.failedAt, platform })).toBe(true);
    expect(handed).toHaveLength(1);
    await handed[0];
    expect({ runs, letters: await ids(queue) }).toEqual({ runs: [letter!.event.id], letters: [] });
  });

  it('replayDeadLetters hands each replayed run to the waitUntil of the platform it is given', async () => {
    const { queue, runs } = await queueWithLetters(3);
    const before = await ids(queue);
    const handed: Promise<unknown>[] = [];
    const result = await replayDeadLetters(
      queue,
      {},
      { platform: { waitUntil: (work) => handed.push(work) } },
    );
    expect(result).toEqual({ replayed: 3, failed: 0 });
    await Promise.all(handed);
    expect({ handed: handed.length, runs: runs.sort(), letters: await ids(queue) }).toEqual({
      handed: 3,
      runs: before,
      letters: [],
    });
  });

  it('answers false, and runs nothing, when a discard takes the letter inside its waitUntil', async () => {
    const { queue, runs } = await queueWithLetters(1);
    const [id] = await ids(queue);
    const discarded: boolean[] = [];
    // A platform whose waitUntil runs the caller's code: a discard of that very letter lands in the middle.
    const platform = { waitUntil: () => void queue.discard(id!).then((done) => discarded.push(done)) };
    expect(await queue.replay(id!, { platform })).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect({ discarded, runs, letters: await ids(queue), depth: (await queue.counts?.())?.depth }).toEqual({
      discarded: [true],
      runs: [],
      letters: [],
      depth: 0,
    });
  });

  it('refuses a platform that is not an object with a waitUntil function, and keeps the letter', async () => {
    const { queue, runs } = await queueWithLetters(1);
    const before = await ids(queue);
    // `ctx.waitUntil` itself, a function with no waitUntil, would keep nothing alive.
    for (const platform of [{ waitUntil: true }, 'ctx', null, () => {}]) {
      await expect(queue.replay(before[0]!, { platform } as never)).rejects.toThrow(ConfigurationError);
      await expect(replayDeadLetters(queue, {}, { platform } as never)).rejects.toThrow(
        /replay platform must be an object with a waitUntil function/,
      );
    }
    expect({ runs, letters: await ids(queue) }).toEqual({ runs: [], letters: before });
  });

  it('refuses a replay whose waitUntil throws (one called without its context), and runs nothing', async () => {
    const { queue, runs } = await queueWithLetters(3);
    const before = await ids(queue);
    // What `{ waitUntil: ctx.waitUntil }` does on Workers: the method, called without its `this`, throws.
    const platform = {
      waitUntil: () => {
        throw new TypeError('Illegal invocation');
      },
    };
    await expect(queue.replay(before[0]!, { platform })).rejects.toThrow(
      /waitUntil threw \(TypeError\), so nothing was replayed: pass the platform context itself/,
    );
    // A bulk replay stops at the first such letter, rather than counting every letter failed with nobody told.
    await expect(replayDeadLetters(queue, {}, { platform, concurrency: 1 })).rejects.toThrow(
      ConfigurationError,
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect({ runs, letters: await ids(queue), depth: (await queue.counts?.())?.depth }).toEqual({
      runs: [],
      letters: before,
      depth: 0,
    });
    // Nothing was lost: the letters replay as ever.
    expect(await replayDeadLetters(queue)).toEqual({ replayed: 3, failed: 0 });
  });
});
