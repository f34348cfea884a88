// The memory queue on Cloudflare's workerd when the platform ends a request after its event's attempt was cut short
// but before the handler that ignores its signal settled: the slot that handler held is freed, not held for good.
import { describe, expect, it } from 'vitest';
import { startTestWorker } from '../support/workerd-worker.js';

const secret = 'whsec_memory_queue_workerd_runaway_request_ended';

// A Worker on the memory queue with one slot, one attempt per event and a one-second limit. Each employee.created
// handler ignores its signal and waits three seconds on a timer of its request; each leave.approved handler records
// its event. A request with an `x-unkept` header gets its waitUntil called but does not pass the work on to the
// platform's, and answers a second and a half after its event started: past the attempt's limit (its signal aborted,
// its handler running on) and before that handler would be let go, one more limit later. It ends then, its timers with
// it, as one does that Workers end past their waitUntil cap. `/state` tells what the handlers did, the dead letters,
// the warnings logged and how many promises given to waitUntil settled.
const WORKER = `
import { createMemoryQueue, createReceiver } from './src/index.ts';

const state = { started: [], finished: [], settled: 0, letters: [], warnings: [] };
const logger = {
  debug() {},
  info() {},
  warn: (_obj, msg) => void state.warnings.push(msg),
  error: (_obj, msg) => void state.warnings.push(msg),
};
const receiver = createReceiver({
  secret: '${secret}',
  logger,
  queue: createMemoryQueue({ concurrency: 1, attempts: 1, handlerTimeoutMs: 1000 }),
  onDeadLetter: (letter) => void state.letters.push(letter.event.id + ' ' + letter.error?.code),
});
receiver.on('employee.created', async (event) => {
  state.started.push(event.id);
  await new Promise((resolve) => setTimeout(resolve, 3000));
  state.finished.push(event.id);
});
receiver.on('leave.approved', async (event) => {
  state.started.push(event.id);
  await new Promise((resolve) => setTimeout(resolve, 20));
  state.finished.push(event.id);
});

export default {
  async fetch(request, _env, ctx) {
    if (new URL(request.url).pathname === '/state') return Response.json(state);
    const unkept = request.headers.has('x-unkept');
    const response = await receiver.fetch(request, {
      waitUntil: (work) => {
        if (!unkept) ctx.waitUntil(work.then(() => void state.settled++));
      },
    });
    if (unkept) await new Promise((resolve) => setTimeout(resolve, 1500));
    return response;
  },
};
`;

interface State {
  started: string[];
  finished: string[];
  settled: number;
  letters: string[];
  warnings: string[];
}

describe('the memory queue on workerd, a request ended while a handler ran on past its cut attempt', () => {
  it('frees the slot that handler held for the next event', { timeout: 180_000 }, async () => {
    const worker = await startTestWorker<State>(WORKER, secret);
    // The first is cut at its limit while its request lives, and its request ends while its handler runs on; the
    // second waits for the slot in a request kept up by waitUntil.
    const cut = await worker.deliver('employee.created', { unkept: true });
    const next = await worker.deliver('leave.approved');
    // A wide bound on a hang: the slot is taken back two attempt limits (2 s) after the attempt was cut.
    const state = await worker.until((each) => each.settled >= 1, 60_000);
    expect({ ...state, warnings: state.warnings.filter((line) => line.includes('ctx.signal')) }).toEqual({
      started: [cut, next],
      finished: [next],
      settled: 1,
      letters: [`${cut} handler_timeout`],
      // Said once, as of a handler that outlives its cut where its request lives.
      warnings: [expect.stringContaining('ignores ctx.signal')],
    });
  });
});
