// One receiver process of the ordering tests: Redis store, BullMQ queue, ordering on, every run recorded in Redis.
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { createReceiver } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createRedisStore } from 'workforce-webhooks/redis';
import { requireEnv, serveInstance } from './serve-instance.js';

const url = requireEnv('REDIS_URL');
const name = requireEnv('RUN_NAME');
const instance = requireEnv('INSTANCE');
// A fixed handler time (the kill test), or a random 0-50 ms.
const handlerMs = process.env.HANDLER_MS;

const client = new Redis(url, { maxRetriesPerRequest: 1 });
const records = new Redis(url);
const receiver = createReceiver({
  secret: requireEnv('SECRET'),
  // Short leases, so that a key left by a killed instance lapses within the test.
  leaseMs: 1000,
  store: createRedisStore({ client, prefix: `${name}:dedupe:` }),
  queue: createBullmqQueue({
    connection: client,
    name,
    lockDurationMs: 1000,
    stalledIntervalMs: 500,
    backoff: () => 10,
  }),
  ordering: {},
  onStale: async (event) => {
    await records.hincrby(`${name}:stale`, event.id, 1);
  },
});

receiver.on('leave.*', async (event, ctx) => {
  const record = (kind: string) =>
    JSON.stringify({ kind, key: ctx.orderingKey, eventId: event.id, state: event.type.slice(6), instance });
  await records.rpush(`${name}:runs`, record('start'));
  await sleep(handlerMs === undefined ? Math.random() * 50 : Number(handlerMs));
  await records
    .multi()
    .hset(`${name}:state`, ctx.orderingKey!, event.type.slice(6))
    .rpush(`${name}:runs`, record('end'))
    .exec();
});

// This script's own clients go last, after the drain: the receiver never closes what it did not open.
serveInstance(receiver, { release: () => Promise.all([client.quit(), records.quit()]) });
