// The memory queue on Cloudflare's workerd when the platform ends a request while its event waits out the backoff
// before a retry: the event becomes a dead letter (`queue_unavailable`) rather than waiting for good on a timer that
// died with that request.
import { describe, expect, it } from 'vitest';
import { startTestWorker } from '../support/workerd-worker.js';

const secret = 'whsec_memory_queue_workerd_retry_request_ended';

// A Worker on the memory queue with two attempts per event, a one-second backoff and limit. Each leave.approved
// handler fails its first attempt at once and records its event on the second; each employee.created handler records
// its event. A request with an `x-unkept` header gets its waitUntil called but does not pass the work on to the
// platform's, and answers a little after its event's first attempt failed: it ends then, the retry's timer with it, as
// one does that Workers end past their waitUntil cap. `/state` tells what the handlers did, the dead letters, and how
// many promises given to waitUntil settled.
const WORKER = `
import { createMemoryQueue, createReceiver } from './src/index.ts';

const state = { finished: [], settled: 0, letters: [] };
const receiver = createReceiver({
  secret: '${secret}',
  queue: createMemoryQueue({ concurrency: 1, attempts: 2, backoff: () => 1000, handlerTimeoutMs: 1000 }),
  onDeadLetter: (letter) => void state.letters.push(letter.event.id + ' ' + letter.error?.code + ' ' + letter.attempts),
});
receiver.on('leave.approved', async (event, ctx) => {
  if (ctx.attempt === 1) throw new Error('the first attempt fails');
  state.finished.push(event.id);
});
receiver.on('employee.created', async (event) => void state.finished.push(event.id));

export default {
  async fetch(request, _env, ctx) {
    if (new URL(request.url).pathname === '/state') return Response.json(state);
    const unkept = request.headers.has('x-unkept');
    const response = await receiver.fetch(request, {
      waitUntil: (work) => {
        if (!unkept) ctx.waitUntil(work.then(() => void state.settled++));
      },
    });
    if (unkept) await new Promise((resolve) => setTimeout(resolve, 200));
    return response;
  },
};
`;

interface State {
  finished: string[];
  settled: number;
  letters: string[];
}

describe('the memory queue on workerd, a request ended while its event waited to be retried', () => {
  it('makes that event a dead letter once the queue next takes a turn', { timeout: 180_000 }, async () => {
    const worker = await startTestWorker<State>(WORKER, secret);
    const lost = await worker.deliver('leave.approved', { unkept: true });
    // Past its retry's due time and one more limit: its request is taken for ended at the next delivery's turn.
    await new Promise((r) => setTimeout(r, 3000));
    const next = await worker.deliver('employee.created');
    const state = await worker.until((each) => each.settled >= 1 && each.letters.length >= 1);
    expect(state).toEqual({
      finished: [next],
      settled: 1,
      // One attempt made: the letter says it waited for its second.
      letters: [`${lost} queue_unavailable 1`],
    });
  });
});
