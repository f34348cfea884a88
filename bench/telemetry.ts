// Telemetry's price: CPU per delivery (handler included, memory backends) with no telemetry, with otelTelemetry() on
// the API alone (no SDK registered), and with the real SDK exporting to memory.
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { createMemoryQueue, createMemoryStore, createReceiver, type Telemetry } from 'workforce-webhooks';
import { otelTelemetry } from 'workforce-webhooks/otel';
import { SECRET } from './fixtures.js';
import { counted, blockCpu as cpuOf, type SetUp } from './in-process.js';
import { median } from './median.js';
import { pick } from './options.js';
import { emit, type Table, type Target } from './report.js';

type Mode = 'off' | 'api' | 'sdk';

// A reader nobody collects: the SDK aggregates every measurement, as it would between two scrapes.
class IdleReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}
const spans = new InMemorySpanExporter();

// A block as every in-process section measures it; the exported spans are not kept from block to block.
const blockCpu = async (setUp: SetUp, size: number, concurrent: number): Promise<number> => {
  const micros = await cpuOf(setUp, size, concurrent);
  spans.reset();
  return micros;
};

function make(mode: Mode): SetUp {
  let telemetry: Telemetry | undefined;
  if (mode === 'api') telemetry = otelTelemetry(); // the global providers: no-ops, no SDK registered
  if (mode === 'sdk') {
    telemetry = otelTelemetry({
      tracerProvider: new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }),
      meterProvider: new MeterProvider({ readers: [new IdleReader()] }),
    });
  }
  return counted(
    createReceiver({
      secret: SECRET,
      store: createMemoryStore(),
      queue: createMemoryQueue(),
      ...(telemetry === undefined ? {} : { telemetry }),
    }),
  );
}

// The three set-ups take turns, block by block (the order rotating), so all see the same machine; median block each.
const modes: Mode[] = ['off', 'api', 'sdk'];
const setUps = Object.fromEntries(modes.map((mode) => [mode, make(mode)])) as Record<Mode, SetUp>;
const size = 5000;
const concurrent = 100;
for (const mode of modes) await blockCpu(setUps[mode], size, concurrent); // warm-up
const cpu: Record<Mode, number[]> = { off: [], api: [], sdk: [] };
const steps = pick(6, 15);
for (let step = 0; step < steps; step++) {
  for (let i = 0; i < modes.length; i++) {
    const mode = modes[(step + i) % modes.length]!;
    cpu[mode].push(await blockCpu(setUps[mode], size, concurrent));
  }
}
await Promise.all(modes.map((mode) => setUps[mode].receiver.close()));
const cost = { off: median(cpu.off), api: median(cpu.api), sdk: median(cpu.sdk) };

// The API-only hooks alone, called as the receiver calls them for each delivery (one span asked for the delivery,
// one for its attempt; neither records, so no observer comes back): what API-only adds, below the blocks' noise.
function hooksAlone(): number {
  const telemetry = otelTelemetry();
  const job = { event: { id: 'e', type: 'leave.approved', occurredAt: '', data: {} }, deliveryId: 'd' };
  const calls = pick(200_000, 1_000_000);
  const rounds: number[] = [];
  let observed = 0;
  for (let round = 0; round < 5; round++) {
    const start = process.cpuUsage();
    for (let i = 0; i < calls; i++) {
      if (telemetry.delivery?.('d') !== undefined) observed++;
      if (telemetry.attempt?.(job as never, 1) !== undefined) observed++;
    }
    const used = process.cpuUsage(start);
    rounds.push(((used.user + used.system) * 1000) / calls);
  }
  if (observed > 0) throw new Error('bench: a no-op tracer span recorded');
  return median(rounds);
}
const hooksNs = hooksAlone();

const us = (micros: number): string => `${micros.toFixed(1)} µs`;
const table: Table = {
  title: 'Telemetry: CPU per 1 KB delivery, handler included, memory store and queue, in process',
  columns: ['telemetry', 'CPU per delivery', 'capacity vs none'],
  rows: [
    ['none', us(cost.off), '1.00'],
    ['otelTelemetry(), API only (no SDK registered)', us(cost.api), (cost.off / cost.api).toFixed(2)],
    [
      'otelTelemetry(), API only: its two hooks alone, a million calls each',
      `${Math.round(hooksNs)} ns`,
      (cost.off / (cost.off + hooksNs / 1000)).toFixed(3),
    ],
    [
      'otelTelemetry(), SDK 2.x, in-memory span exporter, metrics aggregated',
      us(cost.sdk),
      (cost.off / cost.sdk).toFixed(2),
    ],
  ],
  note: 'Blocks of the three set-ups in turns, median of each (the blocks spread by about ±10 % from run to run, more than API-only costs; the hooks-alone row measures that cost directly, its ratio against the none row). With the SDK every delivery makes two spans (receive, process), exported one by one through SimpleSpanProcessor, and five measurements.',
};
const targets: Target[] = [
  { name: 'telemetry with the API and no SDK / none, capacity', value: cost.off / cost.api, goal: 0.98 },
];
emit({ tables: [table], targets });
