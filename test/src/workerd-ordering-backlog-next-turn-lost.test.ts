// The memory queue on Cloudflare's workerd with ordering on, when the request whose enqueue set the queue's next-turn
// timer ends with its answer (the timer may die with it): a backlog of one record's events behind it still drains, in
// order, each event once, for kept jobs look at the queue every second while they wait.
import { Miniflare } from 'miniflare';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { bundleForWorkerd } from '../support/workerd-bundle.js';

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
    const mf = new Miniflare({
      modules: true,
      script: await bundleForWorkerd(WORKER),
      compatibilityDate: '2026-04-01',
    });
    onTestFinished(() => mf.dispose());
    await mf.ready;
    const send = async (type: 'leave.approved' | 'employee.created', unkept: boolean): Promise<string> => {
      const delivery = await createSignedDelivery({ secret, type });
      const response = await mf.dispatchFetch('http://worker/webhooks/workforce', {
        method: 'POST',
        headers: unkept ? { ...delivery.headers, 'x-unkept': '1' } : delivery.headers,
        body: delivery.body,
      });
      expect(response.status).toBe(202);
      await response.arrayBuffer();
      return delivery.event.id;
    };
    const first = await send('employee.created', true);
    // One after the other, each answered at once: a backlog behind the one slot, oldest first.
    const leaves: string[] = [];
    for (let i = 0; i < 5; i++) leaves.push(await send('leave.approved', false));
    const read = async (): Promise<State> =>
      (await (await mf.dispatchFetch('http://worker/state')).json()) as State;
    let state = await read();
    // A wide bound on a hang.
    const deadline = Date.now() + 30_000;
    while (state.settled < leaves.length && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      state = await read();
    }
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
