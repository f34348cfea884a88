// The memory queue on Cloudflare's workerd with ordering on, when the platform ends the request of an event that waits
// for its ordering key: the event becomes a dead letter (`queue_unavailable`) rather than waiting for good on a
// wake-up and a timer that died with that request.
import { describe, expect, it } from 'vitest';
import { startTestWorker } from '../support/workerd-worker.js';

const secret = 'whsec_workerd_ordering_wait_request_ended';

// A Worker on the memory queue with two slots, one attempt per event and a one-second limit, ordering every
// leave.approved event by one key, with a two-second lease. Each leave.approved handler holds its key half a second,
// then records its event; each employee.created handler (not ordered) records its event. A request with an `x-unkept`
// header gets its waitUntil called but does not pass the work on to the platform's, and answers a little after its
// event found its key held: it ends then, as one does that Workers end past their waitUntil cap. `/state` tells what
// the handlers did, the dead letters, and how many promises given to waitUntil settled. The receiver is made by the
// first request: ordering draws a random id, which Workers refuse at a module's top level.
const WORKER = `
import { createMemoryQueue, createReceiver } from './src/index.ts';

const state = { started: [], finished: [], settled: 0, letters: [] };
const create = () => {
const receiver = createReceiver({
  secret: '${secret}',
  queue: createMemoryQueue({ concurrency: 2, attempts: 1, handlerTimeoutMs: 1000 }),
  leaseMs: 2000,
  ordering: { key: (event) => (event.type === 'leave.approved' ? 'one-record' : undefined) },
  onDeadLetter: (letter) => void state.letters.push(letter.event.id + ' ' + letter.error?.code + ' ' + letter.attempts),
});
receiver.on('leave.approved', async (event) => {
  state.started.push(event.id);
  await new Promise((resolve) => setTimeout(resolve, 500));
  state.finished.push(event.id);
});
receiver.on('employee.created', async (event) => void state.finished.push(event.id));
return receiver;
};
let receiver;

export default {
  async fetch(request, _env, ctx) {
    if (new URL(request.url).pathname === '/state') return Response.json(state);
    receiver ??= create();
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

/**
 * The Worker on workerd, and its state once `settled` promises handed to waitUntil settled and `letters` dead letters
 * were made (or when a wide bound on a hang passed).
 */
async function start() {
  const worker = await startTestWorker<State>(WORKER, secret);
  const until = (settled: number, letters: number): Promise<State> =>
    worker.until((state) => state.settled >= settled && state.letters.length >= letters);
  return { send: worker.deliver, until };
}

describe('the memory queue on workerd, an event waiting for its ordering key', () => {
  it('runs in its own request once the key is given up, that request kept up', {
    timeout: 180_000,
  }, async () => {
    const { send, until } = await start();
    const first = await send('leave.approved');
    const second = await send('leave.approved');
    expect(await until(2, 0)).toEqual({
      started: [first, second],
      finished: [first, second],
      settled: 2,
      letters: [],
    });
  });

  it('is a dead letter once the queue next takes a turn, when its request was ended', {
    timeout: 180_000,
  }, async () => {
    const { send, until } = await start();
    // The first holds the key for half a second; the second, newer, finds it held and waits in a request that ends.
    const first = await send('leave.approved');
    const lost = await send('leave.approved', { unkept: true });
    // Past the first's end, and past the wait's own bound (a lease) and one more limit: the waiting event's request
    // is taken for ended at the next delivery's turn.
    await new Promise((r) => setTimeout(r, 4000));
    const next = await send('employee.created');
    expect(await until(2, 1)).toEqual({
      started: [first],
      finished: [first, next],
      settled: 2,
      // No attempt made: the letter says it waited for its first.
      letters: [`${lost} queue_unavailable 0`],
    });
  });
});
