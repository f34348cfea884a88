// Section 7: one instance of the durable path (Redis store x BullMQ queue) against the hand-written receiver that
// does the least with the same guarantee: capacity with processing in the window, latency, Redis round trips.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { createReceiver } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createRedisStore } from 'workforce-webhooks/redis';
import { interleave, pairedCapacity, type Run, summarize } from './blocks.js';
import { durableBaseline } from './durable-baseline.js';
import { EVENT_TYPE, eventTemplate, SECRET, svcHeaders } from './fixtures.js';
import { type LoadResult, load } from './load.js';
import { pick } from './options.js';
import { runSection, startRedis } from './redis-server.js';
import { commandCounts, type PerEvent, perEvent } from './redis-stats.js';
import { emit, ms, ops, ratio, type Table } from './report.js';
import { countRoundTrips } from './round-trips.js';
import { processed, type ServerProcess, startServer } from './server-process.js';

const ROUNDS = pick(1, 3);
const SECONDS = pick(2, 5);
const STEPS = pick(4, 12);
const BLOCK = pick(300, 500);
const DELIVERIES = pick(100, 1000);
const VARIANTS = ['baseline', 'package'] as const;
type Variant = (typeof VARIANTS)[number];

const redis = await startRedis();
const admin = new Redis(redis.url);
let queues = 0;
const freshQueue = (): string => `bench-${++queues}`;

/** Round trips and commands per delivery, one delivery at a time, the receiver in this process. */
interface Trips {
  readonly before: number;
  readonly after: number;
  readonly commands: PerEvent;
}

const trips = countRoundTrips();
const template = eventTemplate(1024);
const until = async (test: () => boolean): Promise<void> => {
  for (let i = 0; !test(); i++) {
    if (i > 20_000) throw new Error('bench: an event was not processed within 20 s');
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
};

// Each delivery is answered, its background work awaited and its job processed before the next is sent, so a
// reply counted after the answer belongs to this delivery (or to a worker's idle fetch, counted too).
async function roundTrips(variant: Variant): Promise<Trips> {
  let done = 0;
  const name = freshQueue();
  let accept: (body: Buffer, headers: Record<string, string>) => Promise<unknown>;
  let close: () => Promise<void>;
  if (variant === 'package') {
    const client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    const receiver = createReceiver({
      secret: SECRET,
      store: createRedisStore({ client }),
      queue: createBullmqQueue({ connection: client, name }),
    });
    receiver.on(EVENT_TYPE, () => {
      done++;
    });
    accept = async (body, headers) => {
      const response = await trips.deliver(async () => receiver.handle({ method: 'POST', headers, body }));
      if (response.status !== 202) throw new Error(`bench: expected 202, got ${response.status}`);
      await response.background;
    };
    close = async () => {
      await receiver.close();
      client.disconnect();
    };
  } else {
    const baseline = durableBaseline({ url: redis.url, name, onProcessed: () => done++ });
    accept = async (body, headers) => {
      const status = await trips.deliver(() => baseline.accept(body, headers['svc-signature']));
      if (status !== 202) throw new Error(`bench: expected 202, got ${status}`);
    };
    close = () => baseline.close();
  }
  const send = async (count: number): Promise<void> => {
    for (let i = 0; i < count; i++) {
      const id = randomUUID();
      const text = template.fill(id);
      const target = done + 1;
      await accept(Buffer.from(text), svcHeaders(text, id));
      await until(() => done >= target);
    }
  };
  await send(20); // connections open, scripts loaded
  const start = trips.totals();
  const startCalls = await commandCounts(admin);
  await send(DELIVERIES);
  const end = trips.totals();
  const commands = perEvent(startCalls, await commandCounts(admin), DELIVERIES);
  await close();
  return {
    before: (end.before - start.before) / DELIVERIES,
    after: (end.after - start.after + end.outside - start.outside) / DELIVERIES,
    commands,
  };
}

async function measureRound(): Promise<Record<Variant, Run>> {
  const servers: ServerProcess[] = [];
  try {
    for (const variant of VARIANTS) {
      const env = { BENCH_REDIS_URL: redis.url, BENCH_QUEUE: freshQueue() };
      servers.push(await startServer('durable', variant, { env, ipc: true }));
    }
    const sent = servers.map(() => 0);
    const loads: LoadResult[] = [];
    for (const [i, server] of servers.entries()) {
      const warm = await load({ port: server.port, seconds: 1 });
      const measured = await load({ port: server.port, seconds: SECONDS });
      sent[i] = warm.accepted + measured.accepted;
      // The backlog the load left is processed before the blocks start.
      await processed(server, sent[i]!);
      loads.push(measured);
    }
    const blocks = await interleave(
      servers.map((server, i) => ({
        port: server.port,
        scheme: 'svc' as const,
        cpuMicros: () => server.cpuMicros(),
        settle: (count: number) => processed(server, sent[i]! + count),
      })),
      { steps: STEPS, size: BLOCK, connections: 10 },
    );
    const [baseline, pkg] = VARIANTS.map((_, i) => ({
      ...loads[i]!,
      blocks: blocks[i]!.cpuPerRequest,
      blockFailures: blocks[i]!.failures,
    }));
    return { baseline: baseline!, package: pkg! };
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }
}

await runSection(redis, admin, async () => {
  const runs: Record<Variant, Run[]> = { baseline: [], package: [] };
  for (let round = 0; round < ROUNDS; round++) {
    console.error(`durable: round ${round + 1}/${ROUNDS}`);
    const result = await measureRound();
    for (const variant of VARIANTS) runs[variant].push(result[variant]);
    await admin.flushall();
  }
  console.error('durable: round trips, one delivery at a time');
  const counted = { baseline: await roundTrips('baseline'), package: await roundTrips('package') };

  const summary = (variant: Variant) => summarize(runs[variant]);
  // Blocks hold processing too: the CPU of each covers its deliveries accepted and processed.
  const capacity = pairedCapacity(runs.package, runs.baseline);
  const row = (label: string, variant: Variant): string[] => {
    const s = summary(variant);
    const t = counted[variant];
    return [
      label,
      ops(s.rps),
      ms(s.p50),
      ms(s.p99),
      `${s.cpu.toFixed(0)} µs`,
      ops(1e6 / s.cpu),
      variant === 'baseline'
        ? ratio(1)
        : `${ratio(capacity.value)} (${ratio(capacity.low)}–${ratio(capacity.high)})`,
      t.before.toFixed(2),
      t.after.toFixed(2),
      t.commands.total.toFixed(2),
      String(s.failures),
    ];
  };
  const tables: Table[] = [
    {
      title: `Durable path, one instance: accept and process, node:http, 1 KB deliveries, ${ROUNDS} round(s): autocannon ${SECONDS} s, then ${STEPS} blocks of ${BLOCK} in turns`,
      columns: [
        'receiver',
        'accepted/s',
        'p50 of the 202',
        'p99 of the 202',
        'server CPU / delivery, processed',
        'accepted and processed per CPU-second',
        'capacity vs hand-written (middle half of blocks)',
        'round trips before the 202',
        'round trips after',
        'Redis commands',
        'non-2xx',
      ],
      rows: [
        row('hand-written: SET NX PX, queue.add, Worker marks done', 'baseline'),
        row('workforce-webhooks: Redis store x BullMQ queue, defaults', 'package'),
      ],
      note:
        "Both in one process on the server core with a BullMQ Worker of concurrency 10; redis-server on the load generator's core. " +
        'A block counts once every delivery of it is answered and processed, so its CPU covers both. Round trips: ' +
        `${DELIVERIES} deliveries one at a time in this process, counted on every ioredis client (a pipeline is one); ` +
        "'after' includes the worker's fetch, completion and idle fetches. Redis commands: INFO commandstats delta " +
        "per delivery, which counts a script's own calls as well as its EVALSHA.",
    },
    {
      title: 'Durable path, one instance: Redis commands per delivery, accepted and processed',
      columns: ['receiver', 'commands (INFO commandstats)'],
      rows: VARIANTS.map((variant) => [variant, counted[variant].commands.byCommand]),
    },
  ];
  emit({
    tables,
    targets: [
      { name: 'durable path, one instance vs hand-written', value: capacity.value, goal: 0.95 },
      {
        name: 'durable path, round trips before the 202 beyond the hand-written',
        value: counted.package.before - counted.baseline.before,
        goal: 0,
        atMost: true,
        unit: 'count',
      },
    ],
  });
});
