// Section 3: the queue-mode 202 at a fixed rate, with handlers that sleep 1 s against handlers that return at once.
import { median } from './median.js';
import { pick } from './options.js';
import { paced, percentile } from './paced.js';
import { emit, ms, type Table } from './report.js';
import { startServer } from './server-process.js';

const RATE = pick(150, 250);
const SECONDS = pick(6, 12);
const ROUNDS = pick(1, 5);

async function measure(handlerMs: number): Promise<{ p50: number; p99: number; statuses: string }> {
  const server = await startServer('node', 'package', { env: { BENCH_HANDLER_MS: String(handlerMs) } });
  try {
    await paced({ port: server.port, rate: RATE, seconds: 1 });
    const { latencies, statuses } = await paced({ port: server.port, rate: RATE, seconds: SECONDS });
    const codes = Object.entries(statuses).map(([code, count]) => `${count}× ${code}`);
    return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), statuses: codes.join(', ') };
  } finally {
    await server.stop();
  }
}

const runs: Record<'noop' | 'slow', { p50: number; p99: number; statuses: string }[]> = {
  noop: [],
  slow: [],
};
for (let round = 0; round < ROUNDS; round++) {
  console.error(`fast-ack: round ${round + 1}/${ROUNDS}`);
  runs.noop.push(await measure(0));
  runs.slow.push(await measure(1000));
}
const summary = (list: (typeof runs)['noop']) => ({
  p50: median(list.map((r) => r.p50)),
  p99: median(list.map((r) => r.p99)),
  statuses: list.map((r) => r.statuses).join(' / '),
});
const noop = summary(runs.noop);
const slow = summary(runs.slow);
// Round by round, as in the HTTP section: a p99 is the 30th-slowest of 3000 answers, so one hiccup of the machine
// moves it; the two set-ups of a round ran back to back, and the target takes the median of their ratios.
const ratios = runs.slow.map((r, i) => r.p99 / runs.noop[i]!.p99);
const p99Ratio = median(ratios);
const spread = ROUNDS === 1 ? '' : ` (${Math.min(...ratios).toFixed(2)}×–${Math.max(...ratios).toFixed(2)}×)`;
const table: Table = {
  title: `Fast 2xx: queue mode at a fixed ${RATE} deliveries/s, ${SECONDS} s x ${ROUNDS} round(s) (node:http adapter)`,
  columns: ['handlers', 'p50', 'p99', 'p99 vs no-op (rounds)', 'answers'],
  rows: [
    ['return at once', ms(noop.p50), ms(noop.p99), '1.00×', noop.statuses],
    ['sleep 1 s each', ms(slow.p50), ms(slow.p99), `${p99Ratio.toFixed(2)}×${spread}`, slow.statuses],
  ],
  note:
    'Latency of the 202 as the sender sees it (request written to answer read), open model: requests leave on ' +
    'schedule whatever the answers do. The memory queue runs 10 handlers at a time; the rest wait in it. p50 and ' +
    "p99: medians over rounds; the ratio: the median of the rounds' ratios (each pair ran back to back).",
};
emit({
  tables: [table],
  targets: [
    {
      name: '202 p99 with 1 s handlers vs no-op handlers',
      value: p99Ratio,
      goal: 1.2,
      atMost: true,
    },
  ],
});
