// `dead-letters replay` stopped by Ctrl-C midway: no letter more is started, the ones under way end, and the command
// says how many it replayed and how many stay dead letters, which is what Redis then holds.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EventQueue, HandlerFailure, silentLogger } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { runCli } from '../../cli/run.js';
import { queuedEvent } from '../contract/queue-suite.js';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';
import { capture } from './capture.js';

const LETTERS = 200;

describe.skipIf(!redisUrl)('dead-letters replay interrupted', () => {
  const name = uniqueName('cli-interrupted');
  let worker: EventQueue;

  beforeAll(async () => {
    worker = createBullmqQueue({ connection: redisUrl, name, attempts: 1, concurrency: 20 });
    worker.start({
      logger: silentLogger,
      process: async () => {
        throw new HandlerFailure([new TypeError('down')], []);
      },
      onDeadLetter: async () => {},
    });
    const jobs = Array.from({ length: LETTERS }, () => queuedEvent());
    await Promise.all(jobs.map((job) => worker.enqueue(job)));
    const admin = connectRedis();
    try {
      const deadline = Date.now() + 90_000;
      while ((await admin.zcard(`bull:${name}:failed`)) < LETTERS) {
        if (Date.now() > deadline) throw new Error('the dead letters were not all recorded in time');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      admin.disconnect();
    }
    // No worker runs what is replayed: a replayed letter waits in the queue, out of the dead letters.
    await worker.close({ timeoutMs: 5000 });
  }, 120_000);

  afterAll(async () => {
    await worker?.close({ timeoutMs: 5000 });
  });

  it('says what it replayed and what stays, and exits 130', { timeout: 120_000 }, async () => {
    const stop = new AbortController();
    const io = capture('', { signal: stop.signal });
    const run = runCli(
      ['dead-letters', 'replay', '--redis', redisUrl, '--queue', name, '--yes', '--concurrency', '1'],
      io,
    );
    const admin = connectRedis();
    try {
      // Ctrl-C once the first letters have left the dead letters.
      const deadline = Date.now() + 60_000;
      while ((await admin.zcard(`bull:${name}:failed`)) === LETTERS) {
        if (Date.now() > deadline) throw new Error('the replay did not start in time');
      }
      stop.abort();
      expect(await run).toBe(130);
      const left = await admin.zcard(`bull:${name}:failed`);
      const said = /stopped: replayed (\d+), failed to enqueue 0; the other (\d+) stay dead letters/.exec(
        io.err,
      );
      expect(said, io.err).not.toBeNull();
      expect(Number(said![2])).toBe(left);
      expect(Number(said![1])).toBe(LETTERS - left);
      expect(left).toBeGreaterThan(0);
      expect(io.err).toContain('stopping: waiting for the replays under way');
      expect(io.out).toBe('');
    } finally {
      admin.disconnect();
    }
  });
});
