// A Redis that goes silent as BullMQ jobs finish: the success record (adapters/bullmq-success.ts) keeps a finished
// job from running again after a takeover, as the handler returns or after a stall during it, when close() waits on
// the silent Redis, and for a job whose lock aged while another job computed; a dead letter of a job that stalled
// after its handlers succeeded is replayed. Each test runs a redis-server of its own.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { redisUrl } from '../setup/redis-helpers.js';
import { hasRedisServer } from '../setup/redis-server.js';
import { type Cleanups, heldRuns, NOT_RUN_AGAIN, silentQueue } from '../support/silent-bullmq.js';

const secret = 'whsec_silent_completion_test';
const cleanups: Cleanups = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

// Synchronous work: the event loop is held for `ms`.
const compute = (ms: number): void => {
  const until = performance.now() + ms;
  while (performance.now() < until);
};

describe.skipIf(!redisUrl || !hasRedisServer())('a Redis silent as BullMQ jobs finish', () => {
  // A job that returns at once waits about 1 s (half its 2 s lock) for BullMQ to confirm its completion; one whose
  // renewals a silent Redis held up, not at all.
  const cases = [
    {
      name: 'Redis goes silent as the handler returns, past the lock',
      // The handler returns at once, and Redis stops just then, for longer than the lock.
      silentBefore: 0,
      silentAfter: 3500,
    },
    {
      name: 'Redis went silent while the handler ran, past the lock, and answers soon after it returns',
      // The lock lapses during the handler (its renewals wait in Redis); Redis answers 100 ms after the handler
      // returned, before a completion waiting for its confirmation would have written anything.
      silentBefore: 2500,
      silentAfter: 100,
    },
  ];
  for (const { name: scenario, silentBefore, silentAfter } of cases) {
    it(`runs a finished event once when ${scenario}, though a worker takes it over`, {
      timeout: 60_000,
    }, async () => {
      // Short locks, so the stall outlasts the lock within the test: 2 s, renewed every 300 ms, stalled checks
      // every 100 ms.
      const queue = await silentQueue(
        secret,
        { lockDurationMs: 2000, lockRenewMs: 300, stalledIntervalMs: 100 },
        cleanups,
      );
      const runs = heldRuns();
      const first = queue.instance();
      first.receiver.on('leave.approved', runs.held);
      const accepted = performance.now();
      const delivery = await queue.accept(first.receiver);
      await runs.started;
      // The other instance, whose stalled check watches the running job.
      const other = queue.instance();
      other.receiver.on('leave.approved', runs.counted);
      // A handler that returns as Redis goes silent ran briefly; the other one ran for a while before it.
      if (silentBefore > 0) await sleep(500);
      else await sleep(Math.max(0, 100 - (performance.now() - accepted)));

      queue.redis.pause();
      try {
        await sleep(silentBefore);
        runs.release();
        await sleep(silentAfter);
      } finally {
        queue.redis.resume();
      }
      await queue.reaches(delivery.event.id, 'completed');
      await sleep(1000);
      // A worker (either instance's) did take the job over after the stall (else this test would prove nothing),
      // and did not run it again.
      expect([...first.lines, ...other.lines].map((line) => line.msg)).toContain(NOT_RUN_AGAIN);
      expect(runs.runs()).toBe(1);
    });
  }

  it('runs an event once when its handler finishes while close() waits on a silent Redis', {
    timeout: 60_000,
  }, async () => {
    // A 6 s lock renewed every 500 ms, stalled checks every 100 ms.
    const queue = await silentQueue(
      secret,
      { lockDurationMs: 6000, lockRenewMs: 500, stalledIntervalMs: 100 },
      cleanups,
    );
    const runs = heldRuns();
    const a = queue.instance().receiver.on('leave.approved', runs.held);
    const delivery = await queue.accept(a);
    await runs.started;
    queue.instance().receiver.on('leave.approved', runs.counted);
    // Renewals confirmed for a while, so the lock is known live just before Redis goes silent.
    await sleep(1200);

    queue.redis.pause();
    try {
      // The instance is shut down (a deploy) while Redis is silent; its handler returns during close().
      const closing = a.close({ timeoutMs: 3000 });
      await sleep(1500);
      runs.release();
      await closing;
      // Silent past the lock (6 s from the last confirmed renewal).
      await sleep(6000);
    } finally {
      queue.redis.resume();
    }
    await queue.reaches(delivery.event.id, 'completed');
    await sleep(1000);
    expect(runs.runs()).toBe(1);
  });

  it('runs an event once when it returns as Redis goes silent, after a job fetched with it computed 3.9 s (lock 6 s)', {
    timeout: 60_000,
  }, async () => {
    // A 6 s lock renewed every 2 s (a third, the default ratio): holding the loop 3.9 s is within the README's
    // "lockDurationMs minus one renewal" (4 s), so no job loses its lock to the computation itself.
    const queue = await silentQueue(
      secret,
      { lockDurationMs: 6000, lockRenewMs: 2000, stalledIntervalMs: 100 },
      cleanups,
    );
    const runs = new Map<string, number>();
    let returnedAt = 0;
    let order = 0;
    // The first event to run computes; the second stops Redis just as it returns.
    const handler = (event: { id: string }) => {
      runs.set(event.id, (runs.get(event.id) ?? 0) + 1);
      order++;
      if (order === 1) compute(3900);
      else if (order === 2) {
        queue.redis.pause();
        returnedAt = performance.now();
      }
    };
    const a = queue.instance().receiver.on('leave.approved', handler);
    // The jobs are added before a worker looks: A's worker fetches both, then runs them.
    const deliveries = await Promise.all([queue.accept(a), queue.accept(a)]);
    queue.instance().receiver.on('leave.approved', handler);
    await expect.poll(() => returnedAt, { timeout: 15_000, interval: 20 }).toBeGreaterThan(0);
    try {
      // Silent past the second job's lock (set at its fetch, about 3.9 s before it returned).
      await sleep(2500);
    } finally {
      queue.redis.resume();
    }
    for (const delivery of deliveries) await queue.reaches(delivery.event.id, 'completed');
    await sleep(1000);
    expect([...runs.values()]).toEqual([1, 1]);
  });

  // Redis goes silent as a handler returns, past the lock; with maxStalledCount 0 a job that stalls is failed (a
  // dead letter) rather than taken over.
  const stalledOut = async () => {
    const letters: string[] = [];
    const queue = await silentQueue(
      secret,
      { lockDurationMs: 2000, lockRenewMs: 300, stalledIntervalMs: 100, maxStalledCount: 0 },
      cleanups,
    );
    const runs = heldRuns();
    const onDeadLetter = (letter: { event: { id: string } }) => void letters.push(letter.event.id);
    const a = queue.instance(onDeadLetter).receiver.on('leave.approved', runs.held);
    const delivery = await queue.accept(a);
    await runs.started;
    queue.instance(onDeadLetter).receiver.on('leave.approved', runs.counted);
    await sleep(100);
    queue.redis.pause();
    try {
      runs.release();
      await sleep(3500);
    } finally {
      queue.redis.resume();
    }
    await queue.reaches(delivery.event.id, 'failed');
    expect(runs.runs()).toBe(1);
    expect((await a.deadLetters()).items.map((letter) => letter.event.id)).toContain(delivery.event.id);
    return { a, queue, delivery, letters, runs };
  };

  it('makes a job BullMQ failed for stalling after its handlers succeeded a dead letter, reported to onDeadLetter', {
    timeout: 60_000,
  }, async () => {
    const { letters, delivery } = await stalledOut();
    await expect.poll(() => letters).toContain(delivery.event.id);
  });

  it('runs such a dead letter again when replayed, whatever success an earlier run recorded', {
    timeout: 60_000,
  }, async () => {
    const { a, queue, delivery, runs } = await stalledOut();
    expect(await a.replay(delivery.event.id)).toBe(true);
    await queue.reaches(delivery.event.id, 'completed');
    await sleep(500);
    expect(runs.runs()).toBe(2);
  });
});
