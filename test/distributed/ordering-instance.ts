// One receiver process of the ordering tests: ordering on, every run recorded in Redis; by default the Redis store and
// BullMQ queue, or (STORE=postgres) the Postgres store and BullMQ on Postgres, or (QUEUE=memory) the memory queue.
import { setTimeout as sleep } from 'node:timers/promises';
import { createPostgresBackend } from 'bullmq';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createMemoryQueue, createReceiver, type DedupeStore, type EventQueue } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createPostgresStore } from 'workforce-webhooks/postgres';
import { createRedisStore } from 'workforce-webhooks/redis';
import { requireEnv, serveInstance } from './serve-instance.js';

const url = requireEnv('REDIS_URL');
const name = requireEnv('RUN_NAME');
const instance = requireEnv('INSTANCE');
// A fixed handler time (the kill test), or a random 0-50 ms.
const handlerMs = process.env.HANDLER_MS;
const postgresUrl = process.env.STORE === 'postgres' ? requireEnv('POSTGRES_URL') : undefined;

const client = new Redis(url, { maxRetriesPerRequest: 1 });
const records = new Redis(url);
const pool = postgresUrl === undefined ? undefined : new pg.Pool({ connectionString: postgresUrl, max: 20 });
pool?.on('error', () => {});
// Short leases and locks, so that a key or job left by a killed instance lapses within the test; or the package's
// defaults (DEFAULT_LOCKS=1), where nothing is killed and a loaded machine must not lose a lease or a lock.
const short = process.env.DEFAULT_LOCKS !== '1';
const locks = { ...(short ? { lockDurationMs: 1000, stalledIntervalMs: 500 } : {}), backoff: () => 10 };
const store: DedupeStore =
  pool === undefined
    ? createRedisStore({ client, prefix: `${name}:dedupe:` })
    : createPostgresStore({ pool, table: `${name}_events`, cleanupIntervalMs: 0 });
const queue: EventQueue =
  process.env.QUEUE === 'memory'
    ? createMemoryQueue({ backoff: () => 10 })
    : pool === undefined
      ? createBullmqQueue({ connection: client, name, ...locks })
      : createBullmqQueue({
          backend: createPostgresBackend,
          connection: { connectionString: postgresUrl, migrate: true, max: 10 },
          name,
          ...locks,
          // A loaded machine's late renewal of a 1 s lock is a stall: tolerated, as a takeover after a kill is.
          maxStalledCount: 5,
        });
const receiver = createReceiver({
  secret: requireEnv('SECRET'),
  ...(short ? { leaseMs: 1000 } : {}),
  store,
  queue,
  ordering: {},
  onStale: async (event) => {
    await records
      .multi()
      .hincrby(`${name}:stale`, event.id, 1)
      .rpush(`${name}:stale-by`, `${instance}:${event.id}`)
      .exec();
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
serveInstance(receiver, { release: () => Promise.all([client.quit(), records.quit(), pool?.end()]) });
