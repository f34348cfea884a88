// A job handed to the same worker again while its earlier attempt still runs there (its lock lapsed while the worker
// was stuck): the earlier attempt is told it lost the lock, and the newer one keeps its lock to the end.
import type { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createMemoryStore,
  createReceiver,
  type DeadLetter,
  type Receiver,
  silentLogger,
} from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';

const secret = 'whsec_bullmq_same_job_again';
const encoder = new TextEncoder();

const toClose: Receiver[] = [];
afterEach(async () => {
  await Promise.all(toClose.splice(0).map((each) => each.close({ timeoutMs: 2000 })));
});

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

async function deliver(receiver: Receiver, id: string) {
  const delivery = await createSignedDelivery({ secret, type: 'leave.approved', id });
  return receiver.handle({ method: 'POST', headers: delivery.headers, body: encoder.encode(delivery.body) });
}

describe.skipIf(!redisUrl)(
  'a job handed to the same worker again while its earlier attempt still runs',
  () => {
    it('aborts the earlier attempt, keeps renewing the newer one’s lock after the earlier ends, and the event ends processed, never a dead letter', {
      timeout: 90_000,
    }, async () => {
      const name = uniqueName('same-job-again');
      const redis: Redis = connectRedis();
      const signals: AbortSignal[] = [];
      const gates = [deferred(), deferred()];
      const letters: DeadLetter[] = [];
      const receiver = createReceiver({
        secret,
        store: createMemoryStore(),
        // A lock renewed late (first after 4 s), so that it lapses, as for a worker stuck past it, before any renewal
        // notices; a stalled check every half second hands the job back at once.
        queue: createBullmqQueue({
          connection: connectRedis(),
          name,
          lockDurationMs: 12_000,
          lockRenewMs: 8000,
          stalledIntervalMs: 500,
        }),
        logger: silentLogger,
        onDeadLetter: (letter) => {
          letters.push(letter);
        },
      }).on('leave.approved', async (_event, ctx) => {
        const gate = gates[signals.push(ctx.signal) - 1]!;
        // Neither attempt listens to its signal: the package must not depend on it.
        await gate.promise;
      });
      toClose.push(receiver);
      const id = crypto.randomUUID();
      const lock = `bull:${name}:${id}:lock`;
      expect((await deliver(receiver, id)).status).toBe(202);
      await expect.poll(() => signals.length, { timeout: 20_000 }).toBe(1);

      // The lock lapses under the running attempt; the stalled check gives the job back, and this worker takes it.
      await redis.pexpire(lock, 1);
      await expect.poll(() => signals.length, { timeout: 20_000 }).toBe(2);
      // README: "its ctx.signal is also aborted when the worker loses the job's lock".
      await expect.poll(() => signals[0]!.aborted, { timeout: 5000 }).toBe(true);
      expect(signals[1]!.aborted).toBe(false);

      // The earlier attempt ends (were it not aborted); the newer one runs on, its lock renewed (the time it has left
      // jumps back up, by seconds: a renewal comes at least 4 s after the lock was set), never lapsing and handed out
      // a third time.
      gates[0]!.resolve();
      const readAt = Date.now();
      const before = await redis.pttl(lock);
      expect(before).toBeGreaterThan(0);
      const renewed = (left: number): boolean => left > before - (Date.now() - readAt) + 2000;
      await expect
        .poll(
          async () => {
            const left = await redis.pttl(lock);
            return renewed(left) || left < 0 ? left : undefined;
          },
          { timeout: 40_000, interval: 200 },
        )
        .toBeGreaterThan(0);
      expect(signals[1]!.aborted).toBe(false);

      gates[1]!.resolve();
      await expect.poll(() => redis.zscore(`bull:${name}:completed`, id), { timeout: 20_000 }).not.toBeNull();
      expect(signals).toHaveLength(2);
      expect(letters).toEqual([]);
      expect((await receiver.deadLetters()).items).toEqual([]);
    });
  },
);
