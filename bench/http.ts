// Section 2: each adapter against the hand-written endpoint on the same framework, and Octokit's middleware.
import { existsSync } from 'node:fs';
import { type LoadResult, load } from './load.js';
import { median } from './median.js';
import { pick } from './options.js';
import { emit, ms, ops, ratio, type Table, type Target } from './report.js';
import { startServer } from './server-process.js';

const ROUNDS = pick(1, 7);
const SECONDS = pick(3, 5);
const WARMUP = pick(1, 2);

interface Framework {
  readonly label: string;
  readonly server: string;
  /** The package's target ratio against the hand-written endpoint. */
  readonly goal: number;
  /** Other hand-written set-ups of the same endpoint, shown beside it; the target uses the first. */
  readonly others?: readonly { readonly variant: string; readonly name: string }[];
}

const FRAMEWORKS: readonly Framework[] = [
  { label: 'node:http', server: 'node', goal: 0.85 },
  { label: 'Express 5', server: 'express', goal: 0.95 },
  { label: 'Hono', server: 'hono', goal: 0.95 },
  {
    label: 'Fastify',
    server: 'fastify',
    goal: 0.95,
    others: [{ variant: 'root', name: 'hand-written, at the root of an app with no plugin' }],
  },
];

// An adapter another engineer has not finished yet is reported as missing, not as slow.
// BENCH_HTTP=node,hono narrows the run while working on one adapter.
const chosen = process.env.BENCH_HTTP?.split(',');
const available = FRAMEWORKS.filter(
  (f) =>
    (chosen === undefined || chosen.includes(f.server)) &&
    (f.server === 'node' || f.server === 'express' || existsSync(`dist/adapters/${f.server}.js`)),
);

type Run = LoadResult & { readonly cpuPerRequest: number };

async function measure(server: string, variant: string): Promise<Run> {
  const running = await startServer(server, variant);
  try {
    const scheme = server === 'octokit' ? 'github' : 'svc';
    await load({ port: running.port, seconds: WARMUP, scheme });
    const cpuBefore = running.cpuMicros();
    const result = await load({ port: running.port, seconds: SECONDS, scheme });
    return { ...result, cpuPerRequest: (running.cpuMicros() - cpuBefore) / result.total };
  } finally {
    await running.stop();
  }
}

const runs = new Map<string, Run[]>();
const record = (key: string, result: Run): void => {
  runs.set(key, [...(runs.get(key) ?? []), result]);
};
// Interleaved rounds: drift on a shared machine hits baseline and package alike.
for (let round = 0; round < ROUNDS; round++) {
  for (const framework of available) {
    for (const variant of ['baseline', 'package', ...(framework.others ?? []).map((o) => o.variant)]) {
      console.error(`http: round ${round + 1}/${ROUNDS}, ${framework.label} ${variant}`);
      record(`${framework.server}:${variant}`, await measure(framework.server, variant));
    }
  }
  if (available.some((f) => f.server === 'node')) {
    console.error(`http: round ${round + 1}/${ROUNDS}, octokit`);
    record('octokit:peer', await measure('octokit', 'peer'));
  }
}

const summary = (key: string) => {
  const list = runs.get(key) ?? [];
  return {
    rps: median(list.map((r) => r.requestsPerSecond)),
    p50: median(list.map((r) => r.p50)),
    p99: median(list.map((r) => r.p99)),
    cpu: median(list.map((r) => r.cpuPerRequest)),
    failures: list.reduce((sum, r) => sum + r.failures, 0),
  };
};
// Capacity of `key` against `against`, round by round: each pair ran back to back, so a slow minute on the
// machine hits both. The median of those ratios, and their spread.
const paired = (key: string, against: string) => {
  const ours = runs.get(key) ?? [];
  const theirs = runs.get(against) ?? [];
  const ratios = ours.map((r, i) => (theirs[i]?.cpuPerRequest ?? Number.NaN) / r.cpuPerRequest);
  return { value: median(ratios), low: Math.min(...ratios), high: Math.max(...ratios) };
};
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
        : ROUNDS === 1
          ? ratio(capacity.value)
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
  if (framework.server === 'node') {
    rows.push(row('@octokit/webhooks createNodeMiddleware', 'octokit:peer'));
    targets.push({
      name: 'node:http adapter vs Octokit middleware',
      value: paired(oursKey, 'octokit:peer').value,
      goal: 1.2,
    });
  }
}
const missing = FRAMEWORKS.filter((f) => !available.includes(f)).map((f) => f.label);
const table: Table = {
  title: `HTTP, 1 KB signed POST, ${SECONDS} s x ${ROUNDS} round(s), 10 connections`,
  columns: [
    'endpoint',
    'req/s',
    'req/s vs hand-written',
    'p50',
    'p99',
    'server CPU / request',
    'req per CPU-second',
    'capacity vs hand-written (rounds)',
    'non-2xx',
  ],
  rows,
  note:
    'Every request carries a fresh event id and signature (no duplicates). The package runs in queue mode with ' +
    'the memory store and one no-op handler; hand-written endpoints verify, parse and answer 202. Medians over ' +
    'rounds. Targets use capacity, requests per CPU-second of the pinned server (/proc utime + stime), which holds ' +
    'still when other work on the machine steals the core, where req/s does not: the median of the ratios of each ' +
    'round, whose two endpoints ran back to back, with the lowest and highest in brackets. autocannon reports ' +
    'latency in whole milliseconds. Fastify: the hand-written endpoint sits in a plugin of its own, as the package ' +
    'does, which an app needs to keep a Buffer parser off its other JSON routes; the root row shows the same ' +
    'endpoint in an app that registers no plugin (docs/benchmarks.md, "How it measures").' +
    (missing.length > 0 ? ` Not measured (adapter not built yet): ${missing.join(', ')}.` : ''),
};
emit({ tables: [table], targets });
