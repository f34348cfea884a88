// The memory queue on Cloudflare's workerd when the platform ends a request while the handlers of its event run: the
// event becomes a dead letter (`queue_unavailable`) and its slot is freed, rather than held by an attempt that never ends.
import { describe, expect, it } from 'vitest';
import { sampleEventData } from 'workforce-webhooks/testing';
import { startTestWorker } from '../support/workerd-worker.js';

const secret = 'whsec_memory_queue_workerd_request_ended_mid_attempt';

// A Worker on the memory queue with one slot and one attempt per event. Each leave.approved handler waits on a timer
// (a second for an event whose data says `slow`), then records the event. A request with an `x-unkept` header gets
// its waitUntil called but does not pass the work on to the platform's, and answers a little after its event started:
// it ends then, its handler's timer with it, as one does that Workers end past their waitUntil cap. `/state` tells
// what the handlers did, the dead letters kept, and how many promises given to waitUntil settled.
const WORKER = `
import { createMemoryQueue, createReceiver } from './src/index.ts';

const state = { started: [], finished: [], settled: 0, letters: [] };
const receiver = createReceiver({
  secret: '${secret}',
  queue: createMemoryQueue({ concurrency: 1, attempts: 1, handlerTimeoutMs: 2000 }),
  onDeadLetter: (letter) => void state.letters.push(letter.event.id + ' ' + letter.error?.code),
});
receiver.on('leave.approved', async (event) => {
  state.started.push(event.id);
  await new Promise((resolve) => setTimeout(resolve, event.data.slow ? 1000 : 20));
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
    if (unkept) await new Promise((resolve) => setTimeout(resolve, 200));
    return response;
  },
};
`;

interface State {
  started: string[];
  finished: string[];
  settled: number;
  letters: string[];
}

describe('the memory queue on workerd, a request ended while its event ran', () => {
  it('makes that event a dead letter and frees its slot for the next', { timeout: 180_000 }, async () => {
    const worker = await startTestWorker<State>(WORKER, secret);
    // The first holds the slot in a request that ends under its handler; the second waits for the slot in a request
    // kept up by waitUntil.
    const cut = await worker.deliver('leave.approved', {
      unkept: true,
      data: { ...sampleEventData('leave.approved'), slow: true },
    });
    const next = await worker.deliver('leave.approved');
    // A wide bound on a hang: the slot is taken back two attempt limits (4 s) after the cut attempt started.
    const state = await worker.until((each) => each.settled >= 1, 60_000);
    expect(state).toEqual({
      started: [cut, next],
      finished: [next],
      settled: 1,
      letters: [`${cut} queue_unavailable`],
    });
  });
});
