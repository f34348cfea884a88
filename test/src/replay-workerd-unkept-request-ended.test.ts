// A replay on Cloudflare's workerd called without the request's platform, whose request ends while the replayed
// event's handler runs: the event is a dead letter again (`queue_unavailable`) and its slot is freed, rather than held
// for good by an attempt whose timers died with that request.
import { describe, expect, it } from 'vitest';
import { startTestWorker } from '../support/workerd-worker.js';

const secret = 'whsec_replay_workerd_unkept_request_ended';

// A Worker on the memory queue with one slot, one attempt per event and a one-second limit. Its handler fails while
// `state.broken`, else waits `state.waitMs` on a timer of its request and records the event. `/replay?id=` fixes the
// cause, makes the handler wait three seconds, and replays the letter without the platform; it answers once the
// replayed handler has started, and ends then, its timers with it. `/state` tells what the handlers did, the dead
// letters reported, and how many promises given to waitUntil settled.
const WORKER = `
import { createMemoryQueue, createReceiver } from './src/index.ts';

const state = { broken: true, waitMs: 20, started: [], finished: [], settled: 0, reported: [] };
const receiver = createReceiver({
  secret: '${secret}',
  logger: { debug() {}, info() {}, warn() {}, error() {} },
  queue: createMemoryQueue({ concurrency: 1, attempts: 1, handlerTimeoutMs: 1000 }),
  onDeadLetter: (letter) => void state.reported.push(letter.event.id + ' ' + (letter.error?.code ?? 'failed')),
});
receiver.on('leave.approved', async (event) => {
  state.started.push(event.id);
  if (state.broken) throw new Error('calendar down');
  await new Promise((resolve) => setTimeout(resolve, state.waitMs));
  state.finished.push(event.id);
});

export default {
  async fetch(request, _env, ctx) {
    const url = new URL(request.url);
    if (url.pathname === '/state') return Response.json(state);
    if (url.pathname === '/replay') {
      state.broken = false;
      state.waitMs = 3000;
      const replayed = await receiver.replay(url.searchParams.get('id'));
      await new Promise((resolve) => setTimeout(resolve, 200));
      state.waitMs = 20;
      return Response.json({ replayed });
    }
    return receiver.fetch(request, {
      waitUntil: (work) => ctx.waitUntil(work.then(() => void state.settled++)),
    });
  },
};
`;

interface State {
  started: string[];
  finished: string[];
  settled: number;
  reported: string[];
}

describe('a replay on workerd without the platform, its request ended while its handler ran', () => {
  it('makes the event a dead letter again and frees its slot for the next', {
    timeout: 180_000,
  }, async () => {
    const { mf, deliver, until: poll } = await startTestWorker<State>(WORKER, secret);
    // A wide bound on a hang: the slot is taken back two attempt limits (2 s) after the replayed attempt started.
    const until = (done: (state: State) => boolean): Promise<State> => poll(done, 60_000);
    const id = await deliver('leave.approved');
    expect(await until((state) => state.settled === 1)).toMatchObject({ reported: [`${id} failed`] });
    const answer = await mf.dispatchFetch(`http://worker/replay?id=${id}`);
    expect(await answer.json()).toEqual({ replayed: true });
    const next = await deliver('leave.approved');
    const { started, finished, settled, reported } = await until((each) => each.settled === 2);
    expect({ started, finished, settled, reported }).toEqual({
      started: [id, id, next],
      finished: [next],
      settled: 2,
      reported: [`${id} failed`, `${id} queue_unavailable`],
    });
  });
});
