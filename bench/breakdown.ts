// Where a queued delivery's CPU goes, in process: verify + parse + route alone, then the same receiver with a handler
// behind two queues: a minimal one written against the public EventQueue interface, and the default memory queue.
import { randomUUID } from 'node:crypto';
import {
  createMemoryQueue,
  createReceiver,
  type EventQueue,
  type QueueHooks,
  type Receiver,
} from 'workforce-webhooks';
import { EVENT_TYPE, eventTemplate, SECRET, svcHeaders } from './fixtures.js';
import { median, quantile } from './median.js';
import { pick } from './options.js';
import { emit, type Table } from './report.js';

const BLOCK = 5_000;
const BLOCKS = pick(6, 30);
const CONCURRENT = 100;
const template = eventTemplate(1024);
const never = new AbortController().signal;

// A queue that runs the job at once, without timers, retries or bookkeeping, as a user could write one against the
// public interface: a promise per enqueue and per job. The memory queue spends no promise on a handler that returns
// at once, but starts it on a later turn and keeps a timeout, retries and a drain. Only for this measurement; it
// drops failures.
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
    deadLetters: async () => ({ items: [], cursor: undefined }),
    replay: async () => false,
    discard: async () => false,
    close: async () => {},
  };
}

// Counts handler runs and wakes a waiter when a count is reached: a block waits for its events' handlers this way
// rather than through each answer's `background`, which an adapter on a long-running server never reads (reading
// it makes a promise per job).
class Runs {
  count = 0;
  #target = 0;
  #wake: (() => void) | undefined;
  readonly handler = (): void => {
    if (++this.count === this.#target) this.#wake?.();
  };
  reach(target: number): Promise<void> | undefined {
    if (this.count >= target) return undefined;
    this.#target = target;
    return new Promise((resolve) => {
      this.#wake = resolve;
    });
  }
}

interface SetUp {
  readonly receiver: Receiver;
  /** Undefined when no handler runs (the first row). */
  readonly runs: Runs | undefined;
}

function withHandler(queue: EventQueue): SetUp {
  const runs = new Runs();
  return { receiver: createReceiver({ secret: SECRET, queue }).on(EVENT_TYPE, runs.handler), runs };
}

const STEPS = {
  'verify + parse + route (no handler: 200 ignored)': (): SetUp => ({
    receiver: createReceiver({ secret: SECRET }),
    runs: undefined,
  }),
  '+ claim, dispatch, done mark, through a minimal EventQueue of promises': () => withHandler(passThrough()),
  '+ claim, dispatch, done mark, through createMemoryQueue (the default)': () =>
    withHandler(createMemoryQueue()),
} as const;

// One block: BLOCK fresh deliveries, CONCURRENT at a time, each chunk's answers awaited and then its handlers. The
// inputs are built before the clock starts; the CPU is the process's (every thread, so GC helpers count). A forced
// collection before each block was tried and dropped: it shrinks the young generation, and every block then ran at
// half speed.
async function blockCpu({ receiver, runs }: SetUp): Promise<number> {
  const inputs = Array.from({ length: BLOCK }, () => {
    const id = randomUUID();
    const text = template.fill(id);
    return { method: 'POST', headers: svcHeaders(text, id), body: Buffer.from(text) };
  });
  const base = runs?.count ?? 0;
  const start = process.cpuUsage();
  for (let i = 0; i < BLOCK; i += CONCURRENT) {
    const chunk = inputs.slice(i, i + CONCURRENT);
    const answers = await Promise.all(chunk.map((input) => receiver.handle(input)));
    for (const answer of answers) {
      if (answer.status !== (runs === undefined ? 200 : 202))
        throw new Error(`bench: answered ${answer.status}`);
    }
    if (runs !== undefined) await runs.reach(base + i + chunk.length);
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / BLOCK;
}

// A difference, signed: a step can cost nothing measurable, and then noise may make it negative.
const signed = (micros: number): string => `${micros < 0 ? '−' : '+'}${Math.abs(micros).toFixed(1)} µs`;

// Every set-up lives in this one process and takes one block per step, so blocks compared with each other ran
// within a fraction of a second of each other; a set-up's cost is the median of its blocks, and what it adds to the
// first row is the median over steps of the difference of the two blocks of that step. The order is shuffled each
// step: with the same allocation every step, a fixed rotation puts the collections on the same places in it, and
// one set-up pays, step after step, for another's garbage.
function shuffled<T>(list: T[]): T[] {
  for (let i = list.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [list[i], list[j]] = [list[j]!, list[i]!];
  }
  return list;
}

const names = Object.keys(STEPS) as (keyof typeof STEPS)[];
const setUps = names.map((name) => STEPS[name]());
for (const setUp of setUps) await blockCpu(setUp); // warm-up, not counted
const perBlock: number[][] = names.map(() => []);
for (let step = 0; step < BLOCKS; step++) {
  for (const i of shuffled(names.map((_, i) => i))) perBlock[i]!.push(await blockCpu(setUps[i]!));
}
for (const { receiver } of setUps) await receiver.close();
const table: Table = {
  title: `Where the time goes: CPU per 1 KB delivery through receiver.handle, in process (${BLOCKS} blocks of ${BLOCK} each, in turns)`,
  columns: ['receiver set-up', 'CPU / delivery (median)', 'added to the first row (middle half of steps)'],
  rows: names.map((name, i) => {
    if (i === 0) return [name, `${median(perBlock[0]!).toFixed(1)} µs`, ''];
    const added = perBlock[i]!.map((micros, step) => micros - perBlock[0]![step]!);
    return [
      name,
      `${median(perBlock[i]!).toFixed(1)} µs`,
      `${signed(median(added))} (${signed(quantile(added, 0.25))} to ${signed(quantile(added, 0.75))})`,
    ];
  }),
  note: `${CONCURRENT} deliveries at a time, then their handlers awaited; includes GC. Both queued rows run one no-op handler. The minimal queue runs it inside enqueue; the memory queue starts jobs on the next turn of the event loop (so that no handler code runs between a delivery and its 202), keeps a timeout, retries and a drain.`,
};
emit({ tables: [table], targets: [] });
