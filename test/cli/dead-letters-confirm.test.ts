// `dead-letters replay|discard` at a terminal: the count and the question first, nothing done unless answered yes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EventQueue, HandlerFailure, silentLogger } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { runCli } from '../../cli/run.js';
import { queuedEvent } from '../contract/queue-suite.js';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';
import { terminal } from './capture.js';

describe.skipIf(!redisUrl)('dead-letters at a terminal', () => {
  const name = uniqueName('cli-confirm');
  const base = ['--redis', redisUrl, '--queue', name];
  const ran: string[] = [];
  let failing = true;
  let worker: EventQueue;

  beforeAll(async () => {
    worker = createBullmqQueue({ connection: redisUrl, name, attempts: 1, concurrency: 10 });
    worker.start({
      logger: silentLogger,
      process: async (job) => {
        if (failing) throw new HandlerFailure([new RangeError('down')], []);
        ran.push(job.event.id);
      },
      onDeadLetter: async () => {},
    });
    const jobs = Array.from({ length: 30 }, (_, i) =>
      queuedEvent({}, i < 10 ? 'leave.approved' : 'employee.updated'),
    );
    await Promise.all(jobs.map((job) => worker.enqueue(job)));
    const admin = connectRedis();
    const deadline = Date.now() + 60_000;
    while ((await admin.zcard(`bull:${name}:failed`)) < 30) {
      if (Date.now() > deadline) throw new Error('the dead letters were not all recorded in time');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    failing = false;
  }, 90_000);

  afterAll(async () => {
    await worker?.close({ timeoutMs: 5000 });
  });

  it('asks with the count, and does nothing when the answer is not yes', async () => {
    const io = terminal('n');
    expect(await runCli(['dead-letters', 'replay', ...base, '--type', 'leave.*'], io)).toBe(1);
    expect(io.err).toContain(`Replay 10 dead letters of queue ${name} of type leave.*? [y/N] `);
    expect(io.err).toContain('nothing done');
    expect((await worker.deadLetters({ type: 'leave.*' })).items).toHaveLength(10);
  });

  it('replays on yes and prints what it did; discards the same way', { timeout: 60_000 }, async () => {
    const io = terminal('y');
    expect(await runCli(['dead-letters', 'replay', ...base, '--type', 'leave.*'], io)).toBe(0);
    expect(io.out).toBe('replayed 10, failed to enqueue 0\n');
    await expect.poll(() => ran.length, { timeout: 30_000 }).toBe(10);
    expect((await worker.deadLetters({ type: 'leave.*' })).items).toEqual([]);

    const discard = terminal('yes');
    expect(await runCli(['dead-letters', 'discard', ...base], discard)).toBe(0);
    expect(discard.err).toContain(`Discard 20 dead letters of queue ${name}? [y/N] `);
    expect(discard.out).toBe('discarded 20\n');
    expect((await worker.deadLetters()).items).toEqual([]);
  });

  it('says what to do when the action or an option is wrong', async () => {
    for (const argv of [
      ['dead-letters', ...base],
      ['dead-letters', 'replays', ...base],
      ['dead-letters', 'list', '--queue', name],
      ['dead-letters', 'list', ...base, '--until', '1700000000000'],
    ]) {
      const io = terminal('y');
      expect(await runCli(argv, io)).toBe(2);
      expect(io.err).toMatch(
        /^workforce-webhooks: error: .+ \(see workforce-webhooks dead-letters --help\)\n$/,
      );
    }
  });
});
