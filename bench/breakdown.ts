// Where a queued delivery's CPU goes, in process: verify + parse alone, then + dedupe and dispatch, then + the queue.
import { randomUUID } from 'node:crypto';
import {
  createMemoryQueue,
  createReceiver,
  type EventQueue,
  type QueueHooks,
  type Receiver,
} from 'workforce-webhooks';
import { EVENT_TYPE, eventTemplate, SECRET, svcHeaders } from './fixtures.js';
import { median } from './median.js';
import { pick } from './options.js';
import { emit, type Table } from './report.js';

const DELIVERIES = pick(10_000, 20_000);
const ROUNDS = pick(3, 7);
const CONCURRENT = 100;
const template = eventTemplate(1024);
const never = new AbortController().signal;

// A queue that runs the job at once, without timers, retries or bookkeeping: what is left is the receiver's own
// work (claim, dispatch, done mark). Only for this measurement; it drops failures.
function passThrough(): EventQueue {
  let hooks: QueueHooks | undefined;
  return {
    start: (h) => {
      hooks = h;
    },
    enqueue: async (job) => ({
      status: 'queued',
      settled: Promise.resolve(hooks!.process(job, { attempt: 1, signal: never })).catch(() => {}),
    }),
    deadLetters: async () => [],
    replay: async () => false,
    close: async () => {},
  };
}

const STEPS = {
  'verify + parse + route (no handler: 200 ignored)': () => createReceiver({ secret: SECRET }),
  '+ dedupe claim, handler dispatch, done mark (pass-through queue)': () =>
    createReceiver({ secret: SECRET, queue: passThrough() }).on(EVENT_TYPE, () => {}),
  '+ createMemoryQueue (the default: timeout, retries, drain)': () =>
    createReceiver({ secret: SECRET, queue: createMemoryQueue() }).on(EVENT_TYPE, () => {}),
} as const;

async function cpuPerDelivery(make: () => Receiver): Promise<number> {
  const receiver = make();
  const inputs = Array.from({ length: DELIVERIES }, () => {
    const id = randomUUID();
    const text = template.fill(id);
    return { method: 'POST', headers: svcHeaders(text, id), body: Buffer.from(text) };
  });
  const start = process.cpuUsage();
  for (let i = 0; i < DELIVERIES; i += CONCURRENT) {
    await Promise.all(
      inputs.slice(i, i + CONCURRENT).map(async (input) => {
        const response = await receiver.handle(input);
        await response.background;
      }),
    );
  }
  const used = process.cpuUsage(start);
  await receiver.close();
  return (used.user + used.system) / DELIVERIES;
}

// A step's difference, signed: a step can cost nothing measurable, and then noise may make it negative.
const signed = (micros: number): string => `${micros < 0 ? '−' : '+'}${Math.abs(micros).toFixed(1)} µs`;

const samples = new Map<string, number[]>();
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, make] of Object.entries(STEPS)) {
    samples.set(name, [...(samples.get(name) ?? []), await cpuPerDelivery(make)]);
  }
}
const medians = [...samples].map(([name, list]) => [name, median(list)] as const);
const table: Table = {
  title: `Where the time goes: CPU per 1 KB delivery through receiver.handle, in process (${ROUNDS} rounds)`,
  columns: ['receiver set-up', 'CPU / delivery (median)', 'added by this step'],
  rows: medians.map(([name, micros], i) => [
    name,
    `${micros.toFixed(1)} µs`,
    i === 0 ? '' : signed(micros - medians[i - 1]![1]),
  ]),
  note: `${CONCURRENT} deliveries at a time, each awaited to the end of its background work; includes GC.`,
};
emit({ tables: [table], targets: [] });
