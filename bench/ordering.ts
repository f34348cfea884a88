// Ordering (spec rule 4) on with a distinct key per event against off: CPU per delivery, handlers included, with the
// memory backends and with Redis x BullMQ, and the Redis round trips before the 202.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { createMemoryQueue, createMemoryStore, createReceiver } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createRedisStore } from 'workforce-webhooks/redis';
import { eventTemplate, SECRET, svcHeaders } from './fixtures.js';
import { blockCpu, counted, type SetUp, until } from './in-process.js';
import { median } from './median.js';
import { pick } from './options.js';
import { startRedis } from './redis-server.js';
import { emit, type Table, type Target } from './report.js';
import { countRoundTrips } from './round-trips.js';

const template = eventTemplate(1024);
const trips = countRoundTrips();
const redis = await startRedis();
const clients: Redis[] = [];
let queues = 0;

// The fixture's event, keyed by its own id: every event has a record of its own (the distinct-keys case).
function make(backend: 'memory' | 'redis', ordered: boolean): SetUp {
  let store = createMemoryStore();
  let queue = createMemoryQueue();
  if (backend === 'redis') {
    const client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    clients.push(client);
    store = createRedisStore({ client, prefix: `bench-${++queues}:` });
    queue = createBullmqQueue({ connection: client, name: `bench-ordering-${queues}` });
  }
  return counted(
    createReceiver({
      secret: SECRET,
      store,
      queue,
      ...(ordered ? { ordering: { key: (event) => event.id } } : {}),
    }),
  );
}

// Off and on take turns, block by block, so both see the same machine; each set-up's cost is its median block.
async function compare(backend: 'memory' | 'redis', steps: number, size: number, concurrent: number) {
  const off = make(backend, false);
  const on = make(backend, true);
  await blockCpu(off, size, concurrent); // warm-up
  await blockCpu(on, size, concurrent);
  const cpu = { off: [] as number[], on: [] as number[] };
  for (let step = 0; step < steps; step++) {
    const order = step % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const);
    for (const which of order) cpu[which].push(await blockCpu(which === 'off' ? off : on, size, concurrent));
  }
  await Promise.all([off.receiver.close(), on.receiver.close()]);
  return { off: median(cpu.off), on: median(cpu.on) };
}

// Round trips per delivery before its answer and after it, one delivery at a time (Redis x BullMQ).
async function roundTrips(ordered: boolean, count: number): Promise<{ before: number; after: number }> {
  const setUp = make('redis', ordered);
  const send = async (n: number): Promise<void> => {
    for (let i = 0; i < n; i++) {
      const id = randomUUID();
      const text = template.fill(id);
      const target = setUp.done + 1;
      const answer = await trips.deliver(() =>
        setUp.receiver.handle({ method: 'POST', headers: svcHeaders(text, id), body: Buffer.from(text) }),
      );
      if (answer.status !== 202) throw new Error(`bench: answered ${answer.status}`);
      await answer.background;
      await until(() => setUp.done >= target);
    }
  };
  await send(10); // connections open, scripts loaded
  const start = trips.totals();
  await send(count);
  const end = trips.totals();
  await setUp.receiver.close();
  return {
    before: (end.before - start.before) / count,
    after: (end.after - start.after + end.outside - start.outside) / count,
  };
}

const memory = await compare('memory', pick(4, 10), 5000, 100);
const durable = await compare('redis', pick(2, 6), pick(300, 1000), 20);
const [tripsOff, tripsOn] = [await roundTrips(false, pick(50, 200)), await roundTrips(true, pick(50, 200))];
await Promise.all(clients.map((client) => client.quit()));
await redis.stop();

const us = (micros: number): string => `${micros.toFixed(1)} µs`;
const capacity = (cost: { off: number; on: number }): number => cost.off / cost.on;
const table: Table = {
  title:
    'Ordering on (a distinct key per event) against off: CPU per 1 KB delivery, handler included, in process',
  columns: [
    'backends',
    'ordering off',
    'ordering on',
    'capacity on / off',
    'Redis round trips before the 202 (off → on)',
    'after it (off → on)',
  ],
  rows: [
    ['memory store × memory queue', us(memory.off), us(memory.on), capacity(memory).toFixed(2), '', ''],
    [
      'Redis store × BullMQ queue',
      us(durable.off),
      us(durable.on),
      capacity(durable).toFixed(2),
      `${tripsOff.before.toFixed(2)} → ${tripsOn.before.toFixed(2)}`,
      `${tripsOff.after.toFixed(2)} → ${tripsOn.after.toFixed(2)}`,
    ],
  ],
  note: "Blocks of off and on in turns, median of each. With ordering on, the claim reads the key's watermark in the same round trip; taking the key and moving its watermark are two Lua scripts run with the handler, after the answer. redis-server's own CPU is not in these numbers.",
};
const targets: Target[] = [
  { name: 'ordering on / off capacity, memory backends', value: capacity(memory), goal: 0.9 },
  { name: 'ordering on / off capacity, Redis × BullMQ', value: capacity(durable), goal: 0.9 },
  {
    name: 'Redis round trips before the 202, ordering on (off: the same or more)',
    value: tripsOn.before,
    goal: tripsOff.before,
    atMost: true,
    unit: 'count',
  },
];
emit({ tables: [table], targets });
