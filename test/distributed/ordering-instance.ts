// One receiver process of the ordering tests: Redis store, BullMQ queue, ordering on, every run recorded in Redis.
import { createServer } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { createReceiver } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createNodeHandler } from 'workforce-webhooks/node';
import { createRedisStore } from 'workforce-webhooks/redis';

const env = (key: string): string => {
  const value = process.env[key];
  if (value === undefined) throw new Error(`ordering instance: ${key} is required`);
  return value;
};
const url = env('REDIS_URL');
const name = env('RUN_NAME');
const instance = env('INSTANCE');
// A fixed handler time (the kill test), or a random 0-50 ms.
const handlerMs = process.env.HANDLER_MS;

const client = new Redis(url, { maxRetriesPerRequest: 1 });
const records = new Redis(url);
const receiver = createReceiver({
  secret: env('SECRET'),
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

const server = createServer(createNodeHandler(receiver));
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  process.stdout.write(`${JSON.stringify({ port })}\n`);
});

process.once('SIGTERM', async () => {
  server.close();
  await receiver.close({ timeoutMs: 10_000 });
  await Promise.all([client.quit(), records.quit()]);
  process.exit(0);
});
