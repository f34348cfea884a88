// Section 5: the Redis store against the memory store on the same load, and Redis commands per accepted delivery.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { createReceiver } from 'workforce-webhooks';
import { createRedisStore } from 'workforce-webhooks/redis';
import { EVENT_TYPE, eventTemplate, SECRET, svcHeaders } from './fixtures.js';
import { type LoadResult, load } from './load.js';
import { median } from './median.js';
import { pick } from './options.js';
import { startRedis } from './redis-server.js';
import { emit, ms, ops, ratio, type Table } from './report.js';
import { startServer } from './server-process.js';

const ROUNDS = pick(1, 3);
const SECONDS = pick(3, 8);
const DELIVERIES = pick(200, 1000);
const redis = await startRedis();

type Run = LoadResult & { readonly cpuPerRequest: number };
async function measure(store: 'memory' | 'redis'): Promise<Run> {
  const env: Record<string, string> = store === 'redis' ? { BENCH_REDIS_URL: redis.url } : {};
  const server = await startServer('node', 'package', { env });
  try {
    await load({ port: server.port, seconds: 1 });
    const cpuBefore = server.cpuMicros();
    const result = await load({ port: server.port, seconds: SECONDS });
    return { ...result, cpuPerRequest: (server.cpuMicros() - cpuBefore) / result.total };
  } finally {
    await server.stop();
  }
}

// Round trips: deliveries one at a time. The store's client counts the replies it gets (no pipelining, so a reply
// is a round trip); those in before the answer are the round trips the 202 waited on. Redis's commandstats gives
// the server-side breakdown (it also counts the commands a Lua script runs).
async function roundTrips(): Promise<{ before: number; after: number; byCommand: string }> {
  const client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  let replied = 0;
  const send = client.sendCommand.bind(client);
  client.sendCommand = ((...args: Parameters<Redis['sendCommand']>) => {
    const reply = send(...args) as Promise<unknown>;
    reply.then(
      () => replied++,
      () => replied++,
    );
    return reply;
  }) as Redis['sendCommand'];
  const observer = new Redis(redis.url);
  const receiver = createReceiver({ secret: SECRET, store: createRedisStore({ client }) });
  receiver.on(EVENT_TYPE, () => {});
  const template = eventTemplate(1024);
  const commandCalls = async (): Promise<Map<string, number>> => {
    const text = await observer.info('commandstats');
    return new Map([...text.matchAll(/cmdstat_([\w|]+):calls=(\d+)/g)].map((m) => [m[1]!, Number(m[2])]));
  };
  await client.ping();
  const startCalls = await commandCalls();
  let before = 0;
  let after = 0;
  for (let i = 0; i < DELIVERIES; i++) {
    const id = randomUUID();
    const text = template.fill(id);
    const t0 = replied;
    const response = await receiver.handle({
      method: 'POST',
      headers: svcHeaders(text, id),
      body: Buffer.from(text),
    });
    const t1 = replied;
    await response.background;
    if (response.status !== 202) throw new Error(`bench: expected 202, got ${response.status}`);
    before += t1 - t0;
    after += replied - t1;
  }
  const endCalls = await commandCalls();
  const byCommand = [...endCalls]
    .filter(([name]) => name !== 'info' && name !== 'ping')
    .map(([name, calls]) => [name, (calls - (startCalls.get(name) ?? 0)) / DELIVERIES] as const)
    .filter(([, perDelivery]) => perDelivery > 0)
    .map(([name, perDelivery]) => `${name.toUpperCase()} ${perDelivery.toFixed(2)}`)
    .join(', ');
  await receiver.close();
  client.disconnect();
  observer.disconnect();
  return { before: before / DELIVERIES, after: after / DELIVERIES, byCommand };
}

try {
  const runs: Record<'memory' | 'redis', Run[]> = { memory: [], redis: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const store of ['memory', 'redis'] as const) {
      console.error(`redis: round ${round + 1}/${ROUNDS}, ${store} store`);
      runs[store].push(await measure(store));
    }
  }
  const summary = (list: Run[]) => ({
    rps: median(list.map((r) => r.requestsPerSecond)),
    p50: median(list.map((r) => r.p50)),
    p99: median(list.map((r) => r.p99)),
    cpu: median(list.map((r) => r.cpuPerRequest)),
    failures: list.reduce((sum, r) => sum + r.failures, 0),
  });
  const memory = summary(runs.memory);
  const withRedis = summary(runs.redis);
  const row = (name: string, s: typeof memory): string[] => [
    name,
    ops(s.rps),
    ratio(s.rps / memory.rps),
    ms(s.p50),
    ms(s.p99),
    `${s.cpu.toFixed(0)} µs`,
    String(s.failures),
  ];
  const trips = await roundTrips();
  const tables: Table[] = [
    {
      title: `Redis store vs memory store, node:http adapter, 1 KB deliveries, ${SECONDS} s x ${ROUNDS} round(s)`,
      columns: ['store', 'req/s', 'vs memory', 'p50', 'p99', 'server CPU / request', 'non-2xx'],
      rows: [
        row('memory (createMemoryStore)', memory),
        row('redis (createRedisStore, local redis-server 7)', withRedis),
      ],
      note: "redis-server runs on the load generator's core; the receiver's server on its own.",
    },
    {
      title: `Redis commands per accepted delivery (${DELIVERIES} deliveries, one at a time)`,
      columns: [
        'round trips the 202 waited on',
        'after the 202 (background)',
        'server-side commands, per delivery',
      ],
      rows: [[trips.before.toFixed(2), trips.after.toFixed(2), trips.byCommand]],
      note:
        "Round trips counted on the store's ioredis client (replies in before / after the answer); the server-side column is the " +
        'INFO commandstats delta, which also counts the GET and SET a Lua script runs. No MONITOR.',
    },
  ];
  emit({
    tables,
    targets: [
      { name: 'Redis round trips before the 202', value: trips.before, goal: 1, atMost: true, unit: 'count' },
    ],
  });
} finally {
  await redis.stop();
}
