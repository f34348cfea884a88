// Section 9: a backlog of accepted events drained by 1 and 3 worker instances of the package, against a bare
// BullMQ Worker of the same concurrency on the same jobs (the floor), and the Redis commands per processed event.
import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type { QueuedEvent, QueueHooks, WorkforceEvent } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { eventTemplate } from './fixtures.js';
import { pick } from './options.js';
import { runSection, startRedis } from './redis-server.js';
import { commandCounts, perEvent, redisCpuMicros } from './redis-stats.js';
import { emit, ops, ratio, type Table } from './report.js';
import { type ServerProcess, startServer } from './server-process.js';

// BENCH_DRAIN_EVENTS overrides the size (a shorter full run on a busy machine).
const EVENTS = Number(process.env.BENCH_DRAIN_EVENTS ?? pick(2000, 100_000));
const POLL_MS = 50;
const CONFIGS = [
  { kind: 'package', instances: 1 },
  { kind: 'bare', instances: 1 },
  { kind: 'package', instances: 3 },
  { kind: 'bare', instances: 3 },
  // Not a target: the floor with the processor signature the package uses, to show what that costs.
  { kind: 'bare-signal', instances: 1 },
] as const;
type Config = (typeof CONFIGS)[number];

const redis = await startRedis();
const admin = new Redis(redis.url);
const template = eventTemplate(1024);
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

// The backlog as the package stores it: its own queue's `enqueue` (job id = event id, its job options), on a
// paused queue so that nothing runs while it fills.
async function fill(name: string): Promise<void> {
  const control = new Queue(name, { connection: admin.duplicate() });
  await control.pause();
  const queue = createBullmqQueue({ connection: redis.url, name });
  queue.start({
    process: async () => {},
    onDeadLetter: async () => {},
    logger: quiet,
  } as unknown as QueueHooks);
  let next = 0;
  // One first, so the rest find the producer connected.
  next++;
  await queue.enqueue({
    event: JSON.parse(template.fill(randomUUID())),
    deliveryId: randomUUID(),
  } as QueuedEvent);
  const worker = async (): Promise<void> => {
    while (next < EVENTS) {
      next++;
      const event = JSON.parse(template.fill(randomUUID())) as WorkforceEvent;
      await queue.enqueue({ event, deliveryId: randomUUID() } as QueuedEvent);
    }
  };
  await Promise.all(Array.from({ length: 50 }, worker));
  await queue.close();
  await control.close();
}

interface Run {
  readonly perSecond: number;
  readonly workerCpu: number;
  readonly redisCpu: number;
  readonly commands: ReturnType<typeof perEvent>;
}

async function drain({ kind, instances }: Config, index: number): Promise<Run> {
  const name = `drain-${index}`;
  console.error(`drain: filling ${EVENTS} events for ${kind} x ${instances}`);
  await fill(name);
  const servers: ServerProcess[] = [];
  try {
    const env = { BENCH_REDIS_URL: redis.url, BENCH_QUEUE: name };
    // BENCH_NODE_ARGS: flags for the workers, e.g. `--cpu-prof --cpu-prof-dir=reports/profiles` to profile them.
    const nodeArgs = process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
    for (let i = 0; i < instances; i++)
      servers.push(await startServer('durable', kind, { env, ipc: true, nodeArgs }));
    await new Promise((resolve) => setTimeout(resolve, 500)); // workers connected and waiting
    console.error(`drain: ${kind} x ${instances}`);
    const control = new Queue(name, { connection: admin.duplicate() });
    const completed = `bull:${name}:completed`;
    const calls = await commandCounts(admin);
    const redisBefore = await redisCpuMicros(admin);
    const cpuBefore = servers.map((s) => s.cpuMicros());
    const start = performance.now();
    await control.resume();
    let polls = 0;
    for (;;) {
      polls++;
      if ((await admin.zcard(completed)) >= EVENTS) break;
      if (performance.now() - start > 600_000) throw new Error('bench: the backlog did not drain in 10 min');
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    const seconds = (performance.now() - start) / 1000;
    const used = servers.reduce((sum, s, i) => sum + s.cpuMicros() - cpuBefore[i]!, 0);
    const redisUsed = (await redisCpuMicros(admin)) - redisBefore;
    const commands = perEvent(calls, await commandCounts(admin), EVENTS, { zcard: polls });
    await control.close();
    return { perSecond: EVENTS / seconds, workerCpu: used / EVENTS, redisCpu: redisUsed / EVENTS, commands };
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    await admin.flushall();
  }
}

await runSection(redis, admin, async () => {
  const runs: Run[] = [];
  for (const [i, config] of CONFIGS.entries()) runs.push(await drain(config, i));
  // Each row against the bare worker with as many instances.
  const floorOf = (i: number): Run =>
    runs[CONFIGS.findIndex((c) => c.kind === 'bare' && c.instances === CONFIGS[i]!.instances)]!;
  const label = {
    package: 'workforce-webhooks, BullMQ queue defaults, no-op handler',
    bare: 'bare BullMQ Worker, no-op processor',
    'bare-signal': "bare BullMQ Worker, no-op processor taking BullMQ's abort signal",
  } as const;
  const rows = CONFIGS.map((config, i) => [
    label[config.kind],
    String(config.instances),
    ops(runs[i]!.perSecond),
    ratio(runs[i]!.perSecond / floorOf(i).perSecond),
    `${runs[i]!.workerCpu.toFixed(0)} µs`,
    `${runs[i]!.redisCpu.toFixed(0)} µs`,
    runs[i]!.commands.total.toFixed(1),
  ]);
  const tables: Table[] = [
    {
      title: `Durable path, drain: ${ops(EVENTS)} accepted events waiting in BullMQ, concurrency 10 per instance`,
      columns: [
        'worker',
        'instances',
        'events/s',
        'vs bare worker',
        'workers CPU / event',
        'Redis CPU / event',
        'Redis commands / event',
      ],
      rows,
      note:
        "The backlog is filled through the package's own BullMQ queue (its job options, job id = event id) while the " +
        'queue is paused, then resumed with the workers waiting; the time runs to the last job in the completed set. ' +
        'Worker processes on the server core, redis-server on the other. Commands: INFO commandstats delta per event ' +
        "(a script's own calls counted as well as its EVALSHA; the bench's own polls left out).",
    },
    {
      title: 'Durable path, drain: Redis commands per processed event',
      columns: ['worker', 'instances', 'commands (INFO commandstats)'],
      rows: CONFIGS.map((c, i) => [c.kind, String(c.instances), runs[i]!.commands.byCommand]),
    },
  ];
  emit({
    tables,
    targets: [
      {
        name: 'drain, 1 instance vs bare BullMQ worker',
        value: runs[0]!.perSecond / runs[1]!.perSecond,
        goal: 0.85,
      },
      {
        name: 'drain, 3 instances vs bare BullMQ workers',
        value: runs[2]!.perSecond / runs[3]!.perSecond,
        goal: 0.85,
      },
    ],
  });
});
