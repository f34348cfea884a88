// A Redis paused (SIGSTOP) for longer than the job lock while a handler runs, two instances on it: the running
// attempt is told it lost the lock (its ctx.signal aborted), the event runs once more to the end, and is never a dead
// letter.
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
import { connectRedis } from '../setup/redis-helpers.js';
import { hasRedisServer, type RedisServer, startRedisServer } from '../setup/redis-server.js';

const secret = 'whsec_bullmq_paused_past_lock';
const encoder = new TextEncoder();
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function deliver(receiver: Receiver, id: string) {
  const delivery = await createSignedDelivery({ secret, type: 'leave.approved', id });
  return receiver.handle({ method: 'POST', headers: delivery.headers, body: encoder.encode(delivery.body) });
}

describe.skipIf(!hasRedisServer())('a Redis paused past the job lock while a handler runs', () => {
  it('aborts the running attempt, runs the event once more to the end on either instance, no dead letter', {
    timeout: 90_000,
  }, async () => {
    const server: RedisServer = await startRedisServer();
    cleanups.push(async () => {
      server.resume();
      await server.dispose();
    });
    const attempts: { label: string; signal: AbortSignal }[] = [];
    const finished: string[] = [];
    const letters: DeadLetter[] = [];
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const make = (label: string): Receiver => {
      const receiver = createReceiver({
        secret,
        store: createMemoryStore(),
        queue: createBullmqQueue({
          connection: connectRedis(server.url),
          name: 'paused-past-lock',
          lockDurationMs: 2000,
          stalledIntervalMs: 500,
        }),
        logger: silentLogger,
        onDeadLetter: (letter) => {
          letters.push(letter);
        },
      }).on('leave.approved', async (_event, ctx) => {
        attempts.push({ label, signal: ctx.signal });
        // Each attempt runs until the test lets it end, or until it is aborted.
        await new Promise<void>((resolve, reject) => {
          void released.then(resolve);
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason));
        });
        finished.push(label);
      });
      cleanups.push(() => receiver.close({ timeoutMs: 2000 }));
      return receiver;
    };
    const a = make('a');
    const id = crypto.randomUUID();
    expect((await deliver(a, id)).status).toBe(202);
    await expect.poll(() => attempts.length, { timeout: 20_000 }).toBe(1);
    make('b');

    // Silent for twice the lock: every instance's commands wait, the lock lapses in Redis meanwhile.
    server.pause();
    await new Promise((resolve) => setTimeout(resolve, 4000));
    server.resume();

    await expect.poll(() => attempts[0]!.signal.aborted, { timeout: 20_000 }).toBe(true);
    expect(String((attempts[0]!.signal.reason as Error).message)).toMatch(/lock was lost/);
    await expect.poll(() => attempts.length, { timeout: 20_000 }).toBe(2);
    expect(attempts[1]!.signal.aborted).toBe(false);
    release();
    const redis = connectRedis(server.url);
    await expect
      .poll(() => redis.zscore('bull:paused-past-lock:completed', id), { timeout: 20_000 })
      .not.toBeNull();
    expect(attempts).toHaveLength(2);
    expect(finished).toHaveLength(1);
    expect(letters).toEqual([]);
  });
});
