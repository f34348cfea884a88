// A Redis that is alive but silent (SIGSTOP): deliveries answered 503 within the receiver's deadline, never 2xx, and
// after SIGCONT the same receiver serves again, with no event run twice although the stalled commands then run.
import { createServer, type Server } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryStore, createReceiver, type DedupeStore, type Receiver } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createNodeHandler } from 'workforce-webhooks/node';
import { createRedisStore } from 'workforce-webhooks/redis';
import { createSignedDelivery, type SignedDelivery } from 'workforce-webhooks/testing';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';
import { hasRedisServer, type RedisServer, startRedisServer } from '../setup/redis-server.js';
import { deliverUntilAccepted } from './cluster.js';

const secret = 'whsec_silent_redis_test';
// The receiver's deadlines by default (`storeTimeoutMs` for the claim, `queueTimeoutMs` for the enqueue): the README
// promises each 503 within them, well under the sender's 10 s.
const DEADLINE_MS = 2000;
// What an answer may take past the deadline here: this process is both the receiver and the sender of 20 deliveries at
// once, and on a loaded machine its event loop may run a second or more late. Redis answers nothing meanwhile (it
// wakes only once every answer came), so each 503 is the receiver's deadline, and comes well before the sender's 10 s.
const MARGIN_MS = 2000;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

// A receiver on the given store and a BullMQ queue on `redis`, with every default (no deadline given), behind node:http.
async function serve(redis: RedisServer, store: DedupeStore) {
  const runs = new Map<string, number>();
  const receiver: Receiver = createReceiver({
    secret,
    store,
    queue: createBullmqQueue({ connection: connectRedis(redis.url), name: uniqueName('silent') }),
  }).on('leave.approved', (event) => void runs.set(event.id, (runs.get(event.id) ?? 0) + 1));
  const server: Server = createServer(createNodeHandler(receiver));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    server.close();
    await receiver.close({ timeoutMs: 2000 });
  });
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
  const post = async (delivery: SignedDelivery<string>) => {
    const started = performance.now();
    const response = await fetch(url, { method: 'POST', headers: delivery.headers, body: delivery.body });
    return {
      status: response.status,
      retryAfter: response.headers.get('retry-after'),
      body: await response.text(),
      ms: performance.now() - started,
    };
  };
  return { url, runs, post };
}

const signed = (count: number) =>
  Promise.all(Array.from({ length: count }, () => createSignedDelivery({ secret, type: 'leave.approved' })));

describe.skipIf(!redisUrl || !hasRedisServer())('Redis alive but silent (SIGSTOP)', () => {
  const startServer = async (): Promise<RedisServer> => {
    const redis = await startRedisServer();
    cleanups.push(() => redis.dispose());
    return redis;
  };

  it('answers every delivery 503 store_unavailable within the store deadline, none 2xx, then serves again after SIGCONT, each event once', {
    timeout: 120_000,
  }, async () => {
    const redis = await startServer();
    // The store's client as the README advises; the deadline is the receiver's, whatever the client does.
    const { url, runs, post } = await serve(redis, createRedisStore({ client: connectRedis(redis.url) }));
    const before = await signed(10);
    expect((await Promise.all(before.map(post))).map((a) => a.status)).toEqual(Array(10).fill(202));
    await expect.poll(() => runs.size).toBe(10);

    redis.pause();
    let answers: Awaited<ReturnType<typeof post>>[];
    const during = await signed(20);
    try {
      answers = await Promise.all(during.map(post));
    } finally {
      redis.resume();
    }
    for (const answer of answers) {
      expect(answer.status).toBe(503);
      expect(answer.retryAfter).toMatch(/^\d+$/);
      expect(JSON.parse(answer.body)).toEqual({ error: 'store_unavailable' });
      expect(answer.ms).toBeLessThan(DEADLINE_MS + MARGIN_MS);
    }
    console.log(`silent Redis: slowest 503 after ${Math.round(Math.max(...answers.map((a) => a.ms)))} ms`);

    // The claims sent during the stall now run on Redis; the receiver gives each up, and the sender's retries
    // (the same receiver, never restarted) are accepted and run once.
    const retried = await Promise.all(
      during.map((delivery) => deliverUntilAccepted(delivery, () => url, { pauseMs: 100 })),
    );
    expect(retried.map((each) => each.at(-1))).toEqual(Array(20).fill(202));
    await expect.poll(() => runs.size, { timeout: 30_000 }).toBe(30);
    // Let anything late land, then count: no event ran twice.
    await sleep(1000);
    expect([...runs.values()].filter((count) => count !== 1)).toEqual([]);
  });

  it('answers 503 queue_unavailable when only the queue is silent; the add that lands later runs the event once', {
    timeout: 120_000,
  }, async () => {
    const redis = await startServer();
    const { url, runs, post } = await serve(redis, createMemoryStore());
    const warm = await signed(1);
    expect((await post(warm[0]!)).status).toBe(202);
    await expect.poll(() => runs.size).toBe(1);

    redis.pause();
    const during = await signed(5);
    let answers: Awaited<ReturnType<typeof post>>[];
    try {
      answers = await Promise.all(during.map(post));
      // The sender retries while the queue is still silent: the claim is held until the stalled add is known.
      const again = await post(during[0]!);
      expect([409, 503]).toContain(again.status);
    } finally {
      redis.resume();
    }
    for (const answer of answers) {
      expect(answer.status).toBe(503);
      expect(JSON.parse(answer.body)).toEqual({ error: 'queue_unavailable' });
      expect(answer.ms).toBeLessThan(DEADLINE_MS + MARGIN_MS);
    }
    // The stalled adds ran once Redis woke: the jobs exist and run, and the retries are duplicates of them.
    const retried = await Promise.all(
      during.map((delivery) => deliverUntilAccepted(delivery, () => url, { pauseMs: 100 })),
    );
    for (const answers of retried) expect([200, 202]).toContain(answers.at(-1));
    await expect.poll(() => runs.size, { timeout: 30_000 }).toBe(6);
    await sleep(1000);
    expect([...runs.values()].filter((count) => count !== 1)).toEqual([]);
  });
});
