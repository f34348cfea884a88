// The memory queue on Cloudflare's workerd when the platform ends a request while the handlers of its event run: the
// event becomes a dead letter (`queue_unavailable`) and its slot is freed, rather than held by an attempt that never ends.
import { Miniflare } from 'miniflare';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createSignedDelivery, sampleEventData } from 'workforce-webhooks/testing';
import { bundleForWorkerd } from '../support/workerd-bundle.js';

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

async function workerScript(): Promise<string> {
  return bundleForWorkerd(WORKER);
}

interface State {
  started: string[];
  finished: string[];
  settled: number;
  letters: string[];
}

describe('the memory queue on workerd, a request ended while its event ran', () => {
  it('makes that event a dead letter and frees its slot for the next', { timeout: 180_000 }, async () => {
    const mf = new Miniflare({
      modules: true,
      script: await workerScript(),
      compatibilityDate: '2026-04-01',
    });
    onTestFinished(() => mf.dispose());
    await mf.ready;
    const send = async (data: Record<string, unknown>, unkept: boolean): Promise<string> => {
      const delivery = await createSignedDelivery({
        secret,
        type: 'leave.approved',
        data: { ...sampleEventData('leave.approved'), ...data },
      });
      const response = await mf.dispatchFetch('http://worker/webhooks/workforce', {
        method: 'POST',
        headers: unkept ? { ...delivery.headers, 'x-unkept': '1' } : delivery.headers,
        body: delivery.body,
      });
      expect(response.status).toBe(202);
      await response.arrayBuffer();
      return delivery.event.id;
    };
    // The first holds the slot in a request that ends under its handler; the second waits for the slot in a request
    // kept up by waitUntil.
    const cut = await send({ slow: true }, true);
    const next = await send({}, false);
    const read = async (): Promise<State> =>
      (await (await mf.dispatchFetch('http://worker/state')).json()) as State;
    let state = await read();
    // A wide bound on a hang: the slot is taken back two attempt limits (4 s) after the cut attempt started.
    const deadline = Date.now() + 60_000;
    while (state.settled < 1 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      state = await read();
    }
    expect(state).toEqual({
      started: [cut, next],
      finished: [next],
      settled: 1,
      letters: [`${cut} queue_unavailable`],
    });
  });
});
