// Telemetry's price: CPU per delivery (handler included, memory backends) with no telemetry, with otelTelemetry() on
// the API alone (no SDK registered), and with the real SDK exporting to memory.
import { randomUUID } from 'node:crypto';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import {
  createMemoryQueue,
  createMemoryStore,
  createReceiver,
  type Receiver,
  type Telemetry,
} from 'workforce-webhooks';
import { otelTelemetry } from 'workforce-webhooks/otel';
import { EVENT_TYPE, eventTemplate, SECRET, svcHeaders } from './fixtures.js';
import { median } from './median.js';
import { pick } from './options.js';
import { emit, type Table, type Target } from './report.js';

const template = eventTemplate(1024);
type Mode = 'off' | 'api' | 'sdk';

// A reader nobody collects: the SDK aggregates every measurement, as it would between two scrapes.
class IdleReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}
const spans = new InMemorySpanExporter();

interface SetUp {
  readonly receiver: Receiver;
  done: number;
}

function make(mode: Mode): SetUp {
  let telemetry: Telemetry | undefined;
  if (mode === 'api') telemetry = otelTelemetry(); // the global providers: no-ops, no SDK registered
  if (mode === 'sdk') {
    telemetry = otelTelemetry({
      tracerProvider: new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }),
      meterProvider: new MeterProvider({ readers: [new IdleReader()] }),
    });
  }
  const setUp: SetUp = {
    receiver: createReceiver({
      secret: SECRET,
      store: createMemoryStore(),
      queue: createMemoryQueue(),
      ...(telemetry === undefined ? {} : { telemetry }),
    }),
    done: 0,
  };
  setUp.receiver.on(EVENT_TYPE, () => {
    setUp.done++;
  });
  return setUp;
}

const until = async (test: () => boolean): Promise<void> => {
  for (let i = 0; !test(); i++) {
    if (i > 60_000) throw new Error('bench: handlers did not finish within 60 s');
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
};

// One block: `size` fresh deliveries, `concurrent` at a time, then every handler awaited; CPU per delivery.
async function blockCpu(setUp: SetUp, size: number, concurrent: number): Promise<number> {
  const inputs = Array.from({ length: size }, () => {
    const id = randomUUID();
    const text = template.fill(id);
    return { method: 'POST', headers: svcHeaders(text, id), body: Buffer.from(text) };
  });
  const target = setUp.done + size;
  const start = process.cpuUsage();
  for (let i = 0; i < size; i += concurrent) {
    const answers = await Promise.all(
      inputs.slice(i, i + concurrent).map((input) => setUp.receiver.handle(input)),
    );
    for (const answer of answers)
      if (answer.status !== 202) throw new Error(`bench: answered ${answer.status}`);
  }
  await until(() => setUp.done >= target);
  const used = process.cpuUsage(start);
  spans.reset(); // the exported spans are not kept from block to block
  return (used.user + used.system) / size;
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

const us = (micros: number): string => `${micros.toFixed(1)} µs`;
const table: Table = {
  title: 'Telemetry: CPU per 1 KB delivery, handler included, memory store and queue, in process',
  columns: ['telemetry', 'CPU per delivery', 'capacity vs none'],
  rows: [
    ['none', us(cost.off), '1.00'],
    ['otelTelemetry(), API only (no SDK registered)', us(cost.api), (cost.off / cost.api).toFixed(2)],
    [
      'otelTelemetry(), SDK 2.x, in-memory span exporter, metrics aggregated',
      us(cost.sdk),
      (cost.off / cost.sdk).toFixed(2),
    ],
  ],
  note: 'Blocks of the three set-ups in turns, median of each. With the SDK every delivery makes two spans (receive, process), exported one by one through SimpleSpanProcessor, and five measurements.',
};
const targets: Target[] = [
  { name: 'telemetry with the API and no SDK / none, capacity', value: cost.off / cost.api, goal: 0.98 },
];
emit({ tables: [table], targets });
