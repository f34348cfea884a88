// The memory queue on Cloudflare's workerd with ordering on, when the request whose enqueue set the queue's next-turn
// timer ends with its answer (the timer may die with it): a backlog of one record's events behind it still drains, in
// order, each event once, for kept jobs look at the queue every second while they wait.
import { describe, expect, it } from 'vitest';
import { startTestWorker } from '../support/workerd-worker.js';

const secret = 'whsec_workerd_ordering_backlog_next_turn_lost';

// A Worker on the memory queue with one slot, ordering every leave.approved event by one key. Each leave.approved
// handler takes 100 ms, then records its event; each employee.created handler (not ordered) records its event at once.
// A request with an `x-unkept` header gets its waitUntil called but does not pass the work on to the platform's: it
// ends with its answer. `/state` tells what the handlers did, the dead letters, and how many promises given to
// waitUntil settled. The receiver is made by the first request: ordering draws a random id, which Workers refuse at a
// module's top level.
const WORKER = `
import { createMemoryQueue, createReceiver } from './src/index.ts';

const state = { finished: [], settled: 0, letters: [] };
const create = () => {
  const receiver = createReceiver({
    secret: '${secret}',
    queue: createMemoryQueue({ concurrency: 1, attempts: 1, handlerTimeoutMs: 1000 }),
    ordering: { key: (event) => (event.type === 'leave.approved' ? 'one-record' : undefined) },
    onDeadLetter: (letter) => void state.letters.push(letter.event.id + ' ' + letter.error?.code),
  });
  receiver.on('leave.approved', async (event) => {
    await new Promise((resolve) => setTimeout(resolve, 100));
    state.finished.push(event.id);
  });
  receiver.on('employee.created', async (event) => void state.finished.push(event.id));
  return receiver;
};
let receiver;

export default {
  fetch(request, _env, ctx) {
    if (new URL(request.url).pathname === '/state') return Response.json(state);
    receiver ??= create();
    const unkept = request.headers.has('x-unkept');
    return receiver.fetch(request, {
      waitUntil: (work) => {
        if (!unkept) ctx.waitUntil(work.then(() => void state.settled++));
      },
    });
  },
};
`;

interface State {
  finished: string[];
  settled: number;
  letters: string[];
}

describe('the memory queue on workerd, its next turn set by a request that ended', () => {
  it("drains a record's backlog behind it, in order, each event once", { timeout: 180_000 }, async () => {
    const worker = await startTestWorker<State>(WORKER, secret);
    const first = await worker.deliver('employee.created', { unkept: true });
    // One after the other, each answered at once: a backlog behind the one slot, oldest first.
    const leaves: string[] = [];
    for (let i = 0; i < 5; i++) leaves.push(await worker.deliver('leave.approved'));
    // A wide bound on a hang.
    const state = await worker.until((each) => each.settled >= leaves.length, 30_000);
    expect(state.settled).toBe(leaves.length);
    expect(state.finished.filter((id) => id !== first)).toEqual(leaves);
    // The first ends once: run, or a dead letter of its request ended before its turn.
    const ends = [
      ...state.finished.filter((id) => id === first),
      ...state.letters.filter((letter) => letter === `${first} queue_unavailable`),
    ];
    expect({
      ends: ends.length,
      letters: state.letters.filter((letter) => !letter.startsWith(first)),
    }).toEqual({
      ends: 1,
      letters: [],
    });
  });
});
