// Section 8: 1, 2 and 3 instances of the durable path behind one round-robin client on one Redis: accepted
// deliveries per second, each instance's CPU per delivery, and Redis's own CPU per delivery (where it becomes the limit).
import { Redis } from 'ioredis';
import { spread } from './blocks.js';
import { median, quantile } from './median.js';
import { pick } from './options.js';
import { runSection, startRedis } from './redis-server.js';
import { redisCpuMicros } from './redis-stats.js';
import { emit, ms, ops, ratio, type Table } from './report.js';
import { type ServerProcess, startServer } from './server-process.js';

const ROUNDS = pick(1, 3);
const SECONDS = pick(2, 6);
const CONNECTIONS = 12; // dealt evenly over 1, 2 or 3 instances
const COUNTS = [1, 2, 3] as const;

const redis = await startRedis();
const admin = new Redis(redis.url);

interface Run {
  readonly perSecond: number;
  /** Instances' CPU per accepted delivery, summed over instances (µs). */
  readonly instanceCpu: number;
  readonly redisCpu: number;
  readonly p50: number;
  readonly p99: number;
  readonly failures: number;
}

async function measure(instances: number, round: number): Promise<Run> {
  const servers: ServerProcess[] = [];
  const env = { BENCH_REDIS_URL: redis.url, BENCH_QUEUE: `scale-${round}-${instances}` };
  try {
    for (let i = 0; i < instances; i++) servers.push(await startServer('durable', 'package', { env }));
    const ports = servers.map((s) => s.port);
    await spread(ports, { seconds: 1, connections: CONNECTIONS });
    const cpuBefore = servers.map((s) => s.cpuMicros());
    const redisBefore = await redisCpuMicros(admin);
    const result = await spread(ports, { seconds: SECONDS, connections: CONNECTIONS });
    const redisUsed = (await redisCpuMicros(admin)) - redisBefore;
    const used = servers.reduce((sum, s, i) => sum + s.cpuMicros() - cpuBefore[i]!, 0);
    const accepted = result.answered - result.failures;
    return {
      perSecond: accepted / SECONDS,
      instanceCpu: used / accepted,
      redisCpu: redisUsed / accepted,
      p50: quantile(result.latenciesMs, 0.5),
      p99: quantile(result.latenciesMs, 0.99),
      failures: result.failures,
    };
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    await admin.flushall();
  }
}

await runSection(redis, admin, async () => {
  const runs = new Map<number, Run[]>(COUNTS.map((n) => [n, []]));
  for (let round = 0; round < ROUNDS; round++) {
    // The order rotates, so no count always runs first on a machine that warms up or gets busier.
    for (let k = 0; k < COUNTS.length; k++) {
      const n = COUNTS[(k + round) % COUNTS.length]!;
      console.error(`scale-out: round ${round + 1}/${ROUNDS}, ${n} instance(s)`);
      runs.get(n)!.push(await measure(n, round));
    }
  }
  const s = (n: number) => {
    const list = runs.get(n)!;
    return {
      perSecond: median(list.map((r) => r.perSecond)),
      instanceCpu: median(list.map((r) => r.instanceCpu)),
      redisCpu: median(list.map((r) => r.redisCpu)),
      p50: median(list.map((r) => r.p50)),
      p99: median(list.map((r) => r.p99)),
      failures: list.reduce((sum, r) => sum + r.failures, 0),
    };
  };
  const one = s(1);
  // With a core per instance, n instances accept n / (CPU per delivery) a second, until Redis's one thread is
  // busy all the time: 1 / (Redis CPU per delivery). Both in deliveries per second, as a ratio to one instance.
  const projected = (n: number) => {
    const x = s(n);
    const instances = (n * 1e6) / x.instanceCpu / (1e6 / one.instanceCpu);
    const redisLimit = 1e6 / x.redisCpu / (1e6 / one.instanceCpu);
    return { instances, redisLimit, value: Math.min(instances, redisLimit) };
  };
  const rows = COUNTS.map((n) => {
    const x = s(n);
    const p = projected(n);
    return [
      String(n),
      ops(x.perSecond),
      ratio(x.perSecond / one.perSecond),
      ms(x.p50),
      ms(x.p99),
      `${x.instanceCpu.toFixed(0)} µs`,
      `${x.redisCpu.toFixed(0)} µs`,
      ops(1e6 / x.redisCpu),
      ratio(p.instances),
      ratio(p.value),
      p.redisLimit < p.instances ? 'Redis' : 'instances',
      String(x.failures),
    ];
  });
  const three = projected(3);
  const limit = three.redisLimit < three.instances ? 'Redis CPU' : 'instances';
  const tables: Table[] = [
    {
      title: `Durable path, scale-out: 1, 2, 3 instances behind a round-robin client, one Redis, ${SECONDS} s x ${ROUNDS} round(s)`,
      columns: [
        'instances',
        'accepted/s (measured)',
        'vs one (measured)',
        'p50',
        'p99',
        'instances CPU / delivery',
        'Redis CPU / delivery',
        'Redis limit (deliveries per Redis CPU-second)',
        'vs one, a core per instance',
        'vs one, capped by Redis',
        'limit',
        'non-2xx',
      ],
      rows,
      note:
        'Every instance is the package with the Redis store and the BullMQ queue at their defaults (it also runs its ' +
        'worker), pinned to the server core; the client (12 connections dealt round-robin over the instances) and ' +
        'redis-server share the other core. On a 2-core machine the instances share one core, so the measured ' +
        'accepted/s cannot grow with instances: it shows what sharing costs. "A core per instance" is n x the ' +
        "one-instance capacity scaled by the CPU per delivery measured at n (what n cores would give); Redis's limit " +
        'is 1 / its CPU per delivery (INFO cpu), the rate at which its one thread is busy all the time.',
    },
  ];
  emit({
    tables,
    targets: [
      {
        name: `scale-out, 3 instances vs one, a core each (limit: ${limit})`,
        value: three.value,
        goal: Math.min(2.4, three.redisLimit),
      },
    ],
  });
});
