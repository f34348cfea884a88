// Inline mode on Cloudflare's workerd: a run answered 202 whose attempt then fails is handed to the memory queue for
// its retry, kept up by the delivery's waitUntil; when the platform ends that request, before the retry or while the
// run's handlers still ran, the event still ends, a dead letter (`queue_unavailable`), never waiting for good on timers
// that died with the request.
import { Miniflare } from 'miniflare';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { bundleForWorkerd } from '../support/workerd-bundle.js';

const secret = 'whsec_workerd_inline_handover_request_ended';

// A Worker in inline mode answering 202 past 200 ms, a run's limit one second, on the memory queue with two attempts
// per event, a half-second backoff and a one-second limit. Each leave.approved handler takes 400 ms, then fails its
// first attempt and records its event on the second; each leave.cancelled handler takes 1.5 s, then records its event
// (its request ended before, by then); each employee.created handler records its event at once. A request with an
// `x-unkept` header gets its waitUntil called but does not pass the work on to the platform's, and answers 400 ms
// after its 202 (past a leave.approved's hand-over): it ends then, the timers of its run and its retry with it, as one
// does that Workers end past their waitUntil cap. `/state` tells what the handlers did, the dead letters
// (onDeadLetter's, and `receiver.deadLetters()`), and how many promises given to waitUntil settled.
const WORKER = `
import { createMemoryQueue, createReceiver } from './src/index.ts';

const state = { started: [], finished: [], settled: 0, letters: [] };
const receiver = createReceiver({
  secret: '${secret}',
  mode: 'inline',
  ackDeadlineMs: 200,
  handlerTimeoutMs: 1000,
  queue: createMemoryQueue({ concurrency: 1, attempts: 2, backoff: () => 500, handlerTimeoutMs: 1000 }),
  onDeadLetter: (letter) => void state.letters.push(letter.event.id + ' ' + letter.error?.code + ' ' + letter.attempts),
});
receiver.on('leave.approved', async (event, ctx) => {
  state.started.push(event.id);
  await new Promise((resolve) => setTimeout(resolve, 400));
  if (ctx.attempt === 1) throw new Error('the first attempt fails');
  state.finished.push(event.id);
});
receiver.on('leave.cancelled', async (event) => {
  state.started.push(event.id);
  await new Promise((resolve) => setTimeout(resolve, 1500));
  state.finished.push(event.id);
});
receiver.on('employee.created', async (event) => void state.finished.push(event.id));

export default {
  async fetch(request, _env, ctx) {
    if (new URL(request.url).pathname === '/state') {
      const { items } = await receiver.deadLetters();
      return Response.json({ ...state, deadLetters: items.map((letter) => letter.event.id + ' ' + letter.error?.code) });
    }
    const unkept = request.headers.has('x-unkept');
    const response = await receiver.fetch(request, {
      waitUntil: (work) => {
        if (!unkept) ctx.waitUntil(work.then(() => void state.settled++));
      },
    });
    if (unkept) await new Promise((resolve) => setTimeout(resolve, 400));
    return response;
  },
};
`;

interface State {
  started: string[];
  finished: string[];
  settled: number;
  letters: string[];
  deadLetters: string[];
}

/** The Worker on workerd, and a delivery of `type` to it (`unkept`: in a request that ends soon after its answer). */
async function start() {
  const mf = new Miniflare({
    modules: true,
    script: await bundleForWorkerd(WORKER),
    compatibilityDate: '2026-04-01',
  });
  onTestFinished(() => mf.dispose());
  await mf.ready;
  const send = async (
    type: 'leave.approved' | 'leave.cancelled' | 'employee.created',
    unkept: boolean,
  ): Promise<{ id: string; status: number }> => {
    const delivery = await createSignedDelivery({ secret, type });
    const response = await mf.dispatchFetch('http://worker/webhooks/workforce', {
      method: 'POST',
      headers: unkept ? { ...delivery.headers, 'x-unkept': '1' } : delivery.headers,
      body: delivery.body,
    });
    await response.arrayBuffer();
    return { id: delivery.event.id, status: response.status };
  };
  // The state once `settled` promises handed to waitUntil settled and `letters` dead letters were made, or when a
  // wide bound on a hang passed.
  const until = async (settled: number, letters: number): Promise<State> => {
    const read = async (): Promise<State> =>
      (await (await mf.dispatchFetch('http://worker/state')).json()) as State;
    let state = await read();
    const deadline = Date.now() + 20_000;
    while ((state.settled < settled || state.letters.length < letters) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      state = await read();
    }
    return state;
  };
  return { send, until };
}

describe('inline mode on workerd, a run handed over to the memory queue', () => {
  it("retries in the delivery's request, kept up by its waitUntil", { timeout: 180_000 }, async () => {
    const { send, until } = await start();
    const leave = await send('leave.approved', false);
    expect(leave.status).toBe(202);
    expect(await until(1, 0)).toEqual({
      started: [leave.id, leave.id],
      finished: [leave.id],
      settled: 1,
      letters: [],
      deadLetters: [],
    });
  });

  it('is in deadLetters() when the platform ended that request before the retry', {
    timeout: 180_000,
  }, async () => {
    const { send, until } = await start();
    const lost = await send('leave.approved', true);
    expect(lost.status).toBe(202);
    // Past the retry's due time and one more limit. Inline deliveries meanwhile never give the queue a turn.
    await new Promise((r) => setTimeout(r, 3000));
    const next = await send('employee.created', false);
    expect(next.status).toBe(200);
    expect(await until(0, 1)).toEqual({
      started: [lost.id],
      finished: [next.id],
      settled: 0,
      // One attempt made: the letter says it waited for its second.
      letters: [`${lost.id} queue_unavailable 1`],
      deadLetters: [`${lost.id} queue_unavailable`],
    });
  });

  it('is a dead letter when the platform ended that request while its handlers ran, found by the next delivery', {
    timeout: 180_000,
  }, async () => {
    const { send, until } = await start();
    const lost = await send('leave.cancelled', true);
    expect(lost.status).toBe(202);
    // Past the run's limit and one more.
    await new Promise((r) => setTimeout(r, 3000));
    const next = await send('employee.created', false);
    expect(next.status).toBe(200);
    expect(await until(0, 1)).toEqual({
      started: [lost.id],
      finished: [next.id],
      settled: 0,
      letters: [`${lost.id} queue_unavailable 1`],
      deadLetters: [`${lost.id} queue_unavailable`],
    });
  });
});
