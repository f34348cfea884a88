// One receiver process of the multi-instance tests: Redis store, memory or BullMQ queue, handlers that count in Redis.
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { createMemoryQueue, createReceiver } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createRedisStore } from 'workforce-webhooks/redis';
import { requireEnv, serveInstance } from './serve-instance.js';

const url = requireEnv('REDIS_URL');
const name = requireEnv('RUN_NAME'); // keys of this run: dedupe claims, the BullMQ queue, the counters
const instance = requireEnv('INSTANCE');
const handlerMs = Number(process.env.HANDLER_MS ?? '0');

const client = new Redis(url, { maxRetriesPerRequest: 1 });
const counts = new Redis(url);
const receiver = createReceiver({
  secret: requireEnv('SECRET'),
  // A short lease, so a claim left by a killed instance lapses within the test.
  leaseMs: 2000,
  store: createRedisStore({ client, prefix: `${name}:dedupe:` }),
  queue:
    requireEnv('QUEUE') === 'bullmq'
      ? createBullmqQueue({
          connection: client,
          name,
          // A dead instance's jobs are taken over after a second rather than the defaults' seconds, unless the
          // test measures the defaults (DEFAULT_LOCKS=1).
          ...(process.env.DEFAULT_LOCKS === '1' ? {} : { lockDurationMs: 1000, stalledIntervalMs: 500 }),
          backoff: () => 10,
        })
      : createMemoryQueue(),
});

// Two handlers per event; each run is counted in Redis, the typed one also logs start and end per instance.
receiver.on('leave.approved', async (event) => {
  await counts.rpush(`${name}:log`, `start:${instance}:${event.id}`);
  if (handlerMs > 0) await sleep(handlerMs);
  await counts
    .multi()
    .hincrby(`${name}:runs:typed`, event.id, 1)
    .rpush(`${name}:log`, `done:${instance}:${event.id}`)
    .hincrby(`${name}:done-by`, instance, 1)
    .exec();
});
receiver.onAny(async (event) => {
  await counts.hincrby(`${name}:runs:any`, event.id, 1);
});

// This script's own clients go last, after the drain: the receiver never closes what it did not open.
serveInstance(receiver, { release: () => Promise.all([client.quit(), counts.quit()]) });
