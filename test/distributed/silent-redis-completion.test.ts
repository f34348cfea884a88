// A Redis that goes silent as BullMQ jobs finish, in the corners of the success record (adapters/bullmq-success.ts):
// a close() that waits on the silent Redis, a job whose lock aged while another job computed, and a dead letter of
// a job that stalled after its handlers succeeded, replayed. Each test runs a redis-server of its own.
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryStore, createReceiver } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';
import { hasRedisServer, startRedisServer } from '../setup/redis-server.js';
import { recordingLogger } from '../support/logger.js';

const secret = 'whsec_silent_completion_test';
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

// Synchronous work: the event loop is held for `ms`.
const compute = (ms: number): void => {
  const until = performance.now() + ms;
  while (performance.now() < until);
};

describe.skipIf(!redisUrl || !hasRedisServer())('close() while Redis is silent', () => {
  it('runs an event once when its handler finishes while close() waits on a silent Redis', {
    timeout: 60_000,
  }, async () => {
    const redis = await startRedisServer();
    cleanups.push(() => redis.dispose());
    const name = uniqueName('silent-close');
    // A 6 s lock renewed every 500 ms, stalled checks every 100 ms.
    const instance = () => {
      const logger = recordingLogger();
      const receiver = createReceiver({
        secret,
        store: createMemoryStore(),
        queue: createBullmqQueue({
          connection: connectRedis(redis.url),
          name,
          lockDurationMs: 6000,
          lockRenewMs: 500,
          stalledIntervalMs: 100,
        }),
        logger,
      });
      return { receiver, logger };
    };
    let runs = 0;
    let started!: () => void;
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    let release!: () => void;
    const finish = new Promise<void>((resolve) => {
      release = resolve;
    });
    const a = instance();
    a.receiver.on('leave.approved', async () => {
      runs++;
      started();
      await finish;
    });
    const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
    const body = new TextEncoder().encode(delivery.body);
    expect((await a.receiver.handle({ method: 'POST', headers: delivery.headers, body })).status).toBe(202);
    await running;
    const b = instance();
    cleanups.push(() => b.receiver.close({ timeoutMs: 2000 }));
    b.receiver.on('leave.approved', () => {
      runs++;
    });
    // Renewals confirmed for a while, so the lock is known live just before Redis goes silent.
    await sleep(1200);

    redis.pause();
    let closing: Promise<void> | undefined;
    try {
      // The instance is shut down (a deploy) while Redis is silent; its handler returns during close().
      closing = a.receiver.close({ timeoutMs: 3000 });
      await sleep(1500);
      release();
      await closing;
      // Silent past the lock (6 s from the last confirmed renewal), as in the README's case.
      await sleep(6000);
    } finally {
      redis.resume();
    }
    const jobs = new Queue(name, { connection: connectRedis(redis.url) });
    cleanups.push(() => jobs.close());
    await expect
      .poll(() => jobs.getJobState(delivery.event.id), { timeout: 20_000, interval: 200 })
      .toBe('completed');
    await sleep(1000);
    // README: "A Redis that stops answering just as a job finishes does not run its handlers again."
    expect(runs).toBe(1);
  });
});

describe.skipIf(!redisUrl || !hasRedisServer())('a job fetched while another job computes', () => {
  it('runs an event once when it returns as Redis goes silent, after a job fetched with it computed 3.9 s (lock 6 s)', {
    timeout: 60_000,
  }, async () => {
    const redis = await startRedisServer();
    cleanups.push(() => redis.dispose());
    const name = uniqueName('silent-busy');
    // A 6 s lock renewed every 2 s (a third, the default ratio): holding the loop 3.9 s is within the README's
    // "lockDurationMs minus one renewal" (4 s), so no job loses its lock to the computation itself.
    const instance = () => {
      const logger = recordingLogger();
      const receiver = createReceiver({
        secret,
        store: createMemoryStore(),
        queue: createBullmqQueue({
          connection: connectRedis(redis.url),
          name,
          lockDurationMs: 6000,
          lockRenewMs: 2000,
          stalledIntervalMs: 100,
        }),
        logger,
      });
      cleanups.push(() => receiver.close({ timeoutMs: 2000 }));
      return { receiver, logger };
    };
    const runs = new Map<string, number>();
    let returnedAt = 0;
    let order = 0;
    // The first event to run computes; the second stops Redis just as it returns.
    const handler = (event: { id: string }) => {
      runs.set(event.id, (runs.get(event.id) ?? 0) + 1);
      order++;
      if (order === 1) compute(3900);
      else if (order === 2) {
        redis.pause();
        returnedAt = performance.now();
      }
    };
    const a = instance();
    a.receiver.on('leave.approved', handler);
    // The jobs are added before a worker looks: A's worker fetches both, then runs them.
    const deliveries = await Promise.all(
      [1, 2].map(() => createSignedDelivery({ secret, type: 'leave.approved' })),
    );
    const accepted = await Promise.all(
      deliveries.map((delivery) =>
        a.receiver.handle({
          method: 'POST',
          headers: delivery.headers,
          body: new TextEncoder().encode(delivery.body),
        }),
      ),
    );
    expect(accepted.map((answer) => answer.status)).toEqual([202, 202]);
    const b = instance();
    b.receiver.on('leave.approved', handler);
    await expect.poll(() => returnedAt, { timeout: 15_000, interval: 20 }).toBeGreaterThan(0);
    try {
      // Silent past the second job's lock (set at its fetch, about 3.9 s before it returned).
      await sleep(2500);
    } finally {
      redis.resume();
    }
    const jobs = new Queue(name, { connection: connectRedis(redis.url) });
    cleanups.push(() => jobs.close());
    for (const delivery of deliveries)
      await expect
        .poll(() => jobs.getJobState(delivery.event.id), { timeout: 20_000, interval: 200 })
        .toBe('completed');
    await sleep(1000);
    // README: "A Redis that stops answering just as a job finishes does not run its handlers again."
    expect([...runs.values()]).toEqual([1, 1]);
  });
});

describe.skipIf(!redisUrl || !hasRedisServer())(
  'a job BullMQ failed for stalling after its handlers succeeded',
  () => {
    // Redis goes silent as a handler returns, past the lock; with maxStalledCount 0 the job that stalled is failed.
    const falseDeadLetter = async () => {
      const letters: string[] = [];
      const redis = await startRedisServer();
      cleanups.push(() => redis.dispose());
      const name = uniqueName('stalled-letter');
      // maxStalledCount 0: a job that stalls is failed (a dead letter) rather than taken over.
      const instance = () => {
        const logger = recordingLogger();
        const receiver = createReceiver({
          secret,
          store: createMemoryStore(),
          queue: createBullmqQueue({
            connection: connectRedis(redis.url),
            name,
            lockDurationMs: 2000,
            lockRenewMs: 300,
            stalledIntervalMs: 100,
            maxStalledCount: 0,
          }),
          logger,
          onDeadLetter: (letter) => void letters.push(letter.event.id),
        });
        cleanups.push(() => receiver.close({ timeoutMs: 2000 }));
        return { receiver, logger };
      };
      let runs = 0;
      let started!: () => void;
      const running = new Promise<void>((resolve) => {
        started = resolve;
      });
      let release!: () => void;
      const finish = new Promise<void>((resolve) => {
        release = resolve;
      });
      const a = instance();
      a.receiver.on('leave.approved', async () => {
        runs++;
        started();
        await finish;
      });
      const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
      const body = new TextEncoder().encode(delivery.body);
      expect((await a.receiver.handle({ method: 'POST', headers: delivery.headers, body })).status).toBe(202);
      await running;
      const b = instance();
      b.receiver.on('leave.approved', () => {
        runs++;
      });
      await sleep(100);
      // Redis goes silent as the handler returns, past the lock: the job stalls and, with maxStalledCount 0, fails.
      redis.pause();
      try {
        release();
        await sleep(3500);
      } finally {
        redis.resume();
      }
      const jobs = new Queue(name, { connection: connectRedis(redis.url) });
      cleanups.push(() => jobs.close());
      await expect
        .poll(() => jobs.getJobState(delivery.event.id), { timeout: 20_000, interval: 200 })
        .toBe('failed');
      expect(runs).toBe(1);
      expect((await a.receiver.deadLetters()).items.map((letter) => letter.event.id)).toContain(
        delivery.event.id,
      );

      return { a, jobs, delivery, letters, runs: () => runs };
    };

    it('is a dead letter, listed and reported to onDeadLetter', { timeout: 60_000 }, async () => {
      const { letters, delivery } = await falseDeadLetter();
      // README, "How the queue works": a job failed for stalling is a dead letter too, reported like the others.
      await expect.poll(() => letters).toContain(delivery.event.id);
    });

    it('runs its handlers again when replayed, whatever success an earlier run recorded', {
      timeout: 60_000,
    }, async () => {
      const { a, jobs, delivery, runs } = await falseDeadLetter();
      // The operator replays the dead letter: README, "receiver.replay(id), which runs it again from its first attempt".
      expect(await a.receiver.replay(delivery.event.id)).toBe(true);
      await expect
        .poll(() => jobs.getJobState(delivery.event.id), { timeout: 20_000, interval: 200 })
        .toBe('completed');
      await sleep(500);
      expect(runs()).toBe(2);
    });
  },
);
