// Section 2: each adapter against the hand-written endpoint on the same framework, and Octokit's middleware.
import { interleave, pairedCapacity, type Run, summarize } from './blocks.js';
import { type LoadResult, load } from './load.js';
import { pick } from './options.js';
import { emit, ms, ops, ratio, type Table, type Target } from './report.js';
import { type ServerProcess, startServer } from './server-process.js';

const ROUNDS = pick(1, 5);
const SECONDS = pick(3, 5);
const WARMUP = pick(1, 2);
// Capacity: blocks of BLOCK deliveries per server, STEPS of them each per round, taken in turns.
const STEPS = pick(10, 40);
const BLOCK = 1000;
const CONNECTIONS = 10;

interface Framework {
  readonly label: string;
  readonly server: string;
  /**
   * The package's target ratio against the hand-written endpoint: 0.85× for every adapter, the price of dedupe, a
   * queue and the card's libraries (lru-cache, raw-body) against an endpoint that has none of them.
   */
  readonly goal: number;
  /** Other hand-written set-ups of the same endpoint, shown beside it; the target uses the first. */
  readonly others?: readonly { readonly variant: string; readonly name: string }[];
}

const FRAMEWORKS: readonly Framework[] = [
  { label: 'node:http', server: 'node', goal: 0.85 },
  { label: 'Express 5', server: 'express', goal: 0.85 },
  { label: 'Hono', server: 'hono', goal: 0.85 },
  {
    label: 'Fastify',
    server: 'fastify',
    goal: 0.85,
    others: [{ variant: 'root', name: 'hand-written, at the root of an app with no plugin' }],
  },
];

// BENCH_HTTP=node,hono narrows the run while working on one adapter; the table names what it left out.
const chosen = process.env.BENCH_HTTP?.split(',');
const available = FRAMEWORKS.filter((f) => chosen === undefined || chosen.includes(f.server));

/** One endpoint of a framework's round: `server` run with `variant`, recorded under `key`. */
interface Endpoint {
  readonly key: string;
  readonly server: string;
  readonly variant: string;
  readonly scheme: 'svc' | 'github';
}

const endpointsOf = (framework: Framework): Endpoint[] => [
  ...['baseline', 'package', ...(framework.others ?? []).map((o) => o.variant)].map(
    (variant): Endpoint => ({
      key: `${framework.server}:${variant}`,
      server: framework.server,
      variant,
      scheme: 'svc',
    }),
  ),
  ...(framework.server === 'node'
    ? [{ key: 'octokit:peer', server: 'octokit', variant: 'peer', scheme: 'github' } as const]
    : []),
];

// A framework's round: every endpoint runs in a process of its own on the server core. Each is warmed up and
// loaded by autocannon alone (req/s, latency); then the blocks go to each in turn for the capacity ratios.
async function measureRound(endpoints: readonly Endpoint[]): Promise<Run[]> {
  const servers: ServerProcess[] = [];
  try {
    for (const endpoint of endpoints) servers.push(await startServer(endpoint.server, endpoint.variant));
    const loads: LoadResult[] = [];
    for (const [i, endpoint] of endpoints.entries()) {
      const { port } = servers[i]!;
      await load({ port, seconds: WARMUP, scheme: endpoint.scheme });
      loads.push(await load({ port, seconds: SECONDS, scheme: endpoint.scheme }));
    }
    const blocks = await interleave(
      endpoints.map((endpoint, i) => ({
        port: servers[i]!.port,
        scheme: endpoint.scheme,
        cpuMicros: () => servers[i]!.cpuMicros(),
      })),
      { steps: STEPS, size: BLOCK, connections: CONNECTIONS },
    );
    return endpoints.map((_, i) => ({
      ...loads[i]!,
      blocks: blocks[i]!.cpuPerRequest,
      blockFailures: blocks[i]!.failures,
    }));
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }
}

const runs = new Map<string, Run[]>();
for (let round = 0; round < ROUNDS; round++) {
  for (const framework of available) {
    console.error(`http: round ${round + 1}/${ROUNDS}, ${framework.label}`);
    const endpoints = endpointsOf(framework);
    const results = await measureRound(endpoints);
    for (const [i, endpoint] of endpoints.entries())
      runs.set(endpoint.key, [...(runs.get(endpoint.key) ?? []), results[i]!]);
  }
}

const summary = (key: string) => summarize(runs.get(key) ?? []);
const paired = (key: string, against: string) => pairedCapacity(runs.get(key) ?? [], runs.get(against) ?? []);
const rows: string[][] = [];
const targets: Target[] = [];
for (const framework of available) {
  const baseKey = `${framework.server}:baseline`;
  const base = summary(baseKey);
  // Capacity of the server's one core, in requests per CPU-second: the ratios the targets use.
  const row = (name: string, key: string): string[] => {
    const s = summary(key);
    const capacity = paired(key, baseKey);
    return [
      `${framework.label}: ${name}`,
      ops(s.rps),
      ratio(s.rps / base.rps),
      ms(s.p50),
      ms(s.p99),
      `${s.cpu.toFixed(0)} µs`,
      ops(1e6 / s.cpu),
      key === baseKey
        ? ratio(1)
        : `${ratio(capacity.value)} (${ratio(capacity.low)}–${ratio(capacity.high)})`,
      String(s.failures),
    ];
  };
  const oursKey = `${framework.server}:package`;
  rows.push(row('hand-written', baseKey), row('workforce-webhooks', oursKey));
  for (const other of framework.others ?? [])
    rows.push(row(other.name, `${framework.server}:${other.variant}`));
  targets.push({
    name: `${framework.label} adapter vs hand-written`,
    value: paired(oursKey, baseKey).value,
    goal: framework.goal,
  });
  // Octokit's middleware is a compared row without a target: it neither dedupes nor queues.
  if (framework.server === 'node') rows.push(row('@octokit/webhooks createNodeMiddleware', 'octokit:peer'));
}
const leftOut = FRAMEWORKS.filter((f) => !available.includes(f)).map((f) => f.label);
const table: Table = {
  title: `HTTP, 1 KB signed POST, 10 connections, ${ROUNDS} round(s): autocannon ${SECONDS} s, then ${STEPS} blocks of ${BLOCK} per endpoint in turns`,
  columns: [
    'endpoint',
    'req/s',
    'req/s vs hand-written',
    'p50',
    'p99',
    'server CPU / request',
    'req per CPU-second',
    'capacity vs hand-written (middle half of blocks)',
    'non-2xx',
  ],
  rows,
  note:
    'Every request carries a fresh event id and signature (no duplicates). The package runs in queue mode with ' +
    'the memory store and one no-op handler; hand-written endpoints verify, parse and answer 202. req/s, p50 and ' +
    'p99: autocannon against each endpoint alone, medians over rounds (latency in whole milliseconds). CPU and ' +
    'capacity: each endpoint in its own process on the server core, sent blocks of deliveries in turns by a ' +
    "raw-socket client; CPU per request is the server process's CPU time over its blocks (every thread, from " +
    '/proc), which holds still when other work on the machine steals the core. The capacity ratio, which the ' +
    'targets use, is the median over every round of the ratios of two blocks sent back to back, with the middle ' +
    'half of those ratios in brackets. Fastify: the hand-written endpoint sits in a plugin of its own, as the ' +
    'package does, which an app needs to keep a Buffer parser off its other JSON routes; the root row shows the ' +
    'same endpoint in an app that registers no plugin (docs/benchmarks.md, "How it measures").' +
    (leftOut.length > 0 ? ` Left out of this run by BENCH_HTTP: ${leftOut.join(', ')}.` : ''),
};
emit({ tables: [table], targets });
