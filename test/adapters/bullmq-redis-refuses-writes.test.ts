// The BullMQ queue's worker on a Redis that refuses writes with a reply of its own (out of memory under noeviction,
// or a read-only replica): it neither spins nor floods the log while Redis refuses, and runs events again after.
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryStore, createReceiver, type Logger, type Receiver } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { hasRedisServer, type RedisServer, startRedisServer } from '../setup/redis-server.js';

const secret = 'whsec_bullmq_refuses_writes';
const encoder = new TextEncoder();
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function deliver(receiver: Receiver, id: string = crypto.randomUUID()) {
  const delivery = await createSignedDelivery({ secret, type: 'leave.approved', id });
  return receiver.handle({ method: 'POST', headers: delivery.headers, body: encoder.encode(delivery.body) });
}

const connect = (server: RedisServer): Redis => {
  const client = new Redis(server.url, { maxRetriesPerRequest: 1 });
  client.on('error', () => {});
  cleanups.push(async () => client.disconnect());
  return client;
};

describe.skipIf(!hasRedisServer())('createBullmqQueue on a Redis that refuses writes', () => {
  const refusals = {
    'out of memory (maxmemory reached, noeviction)': {
      refuse: (redis: Redis) => redis.config('SET', 'maxmemory', '1'),
      restore: (redis: Redis) => redis.config('SET', 'maxmemory', '0'),
    },
    'a read-only replica': {
      refuse: (redis: Redis, other: RedisServer) => redis.replicaof('127.0.0.1', other.port),
      restore: (redis: Redis) => redis.replicaof('NO', 'ONE'),
    },
  };

  for (const [label, { refuse, restore }] of Object.entries(refusals)) {
    it(`logs a few lines, not thousands, while Redis is ${label}, and runs events once it takes writes`, {
      timeout: 60_000,
    }, async () => {
      const server = await startRedisServer();
      const other = await startRedisServer();
      cleanups.push(
        () => server.dispose(),
        () => other.dispose(),
      );
      const admin = connect(server);
      let lines = 0;
      const count = (): void => {
        lines += 1;
      };
      const logger: Logger = { debug() {}, info: count, warn: count, error: count };
      const runs: string[] = [];
      let release!: () => void;
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      const receiver = createReceiver({
        secret,
        logger,
        store: createMemoryStore(),
        queue: createBullmqQueue({ connection: server.url, name: 'refused', concurrency: 1 }),
      }).on('leave.approved', async (event) => {
        runs.push(event.id);
        if (runs.length === 1) await held;
      });
      cleanups.push(() => receiver.close({ timeoutMs: 2000 }));
      // Redis starts refusing with a backlog (as a Redis that fills up has): the running job's completion and the
      // worker's next fetches are refused.
      const first = crypto.randomUUID();
      expect((await deliver(receiver, first)).status).toBe(202);
      await expect.poll(() => runs, { timeout: 10_000 }).toEqual([first]);
      const waiting = crypto.randomUUID();
      expect((await deliver(receiver, waiting)).status).toBe(202);
      lines = 0;
      await refuse(admin, other);
      release();
      // The worker keeps asking for jobs meanwhile; each refusal may be said, but not in a tight loop.
      await sleep(3000);
      expect(lines).toBeLessThan(100);

      await restore(admin);
      const after = crypto.randomUUID();
      await expect
        .poll(async () => (await deliver(receiver, after)).status, { timeout: 15_000, interval: 250 })
        .toBe(202);
      // The event that waited through it runs too, and the one accepted after.
      await expect
        .poll(() => [waiting, after].every((id) => runs.includes(id)), { timeout: 15_000 })
        .toBe(true);
    });
  }

  it('logs a few lines, not thousands, when an instance starts on a Redis out of memory, and runs events after', {
    timeout: 60_000,
  }, async () => {
    const server = await startRedisServer();
    cleanups.push(() => server.dispose());
    const admin = connect(server);
    await admin.config('SET', 'maxmemory', '1');
    let lines = 0;
    const count = (): void => {
      lines += 1;
    };
    const logger: Logger = { debug() {}, info: count, warn: count, error: count };
    const runs: string[] = [];
    // A deploy or a restart while Redis is full: the new instance's worker is refused from its first fetch.
    const receiver = createReceiver({
      secret,
      logger,
      store: createMemoryStore(),
      queue: createBullmqQueue({ connection: server.url, name: 'full-at-start' }),
    }).on('leave.approved', (event) => void runs.push(event.id));
    cleanups.push(() => receiver.close({ timeoutMs: 2000 }));
    await sleep(3000);
    expect(lines).toBeLessThan(100);

    await admin.config('SET', 'maxmemory', '0');
    const after = crypto.randomUUID();
    await expect
      .poll(async () => (await deliver(receiver, after)).status, { timeout: 15_000, interval: 250 })
      .toBe(202);
    await expect.poll(() => runs, { timeout: 15_000 }).toEqual([after]);
  });
});
