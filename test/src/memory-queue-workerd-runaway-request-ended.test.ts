// The memory queue on Cloudflare's workerd when the platform ends a request after its event's attempt was cut short
// but before the handler that ignores its signal settled: the slot that handler held is freed, not held for good.
import { Miniflare } from 'miniflare';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createSignedDelivery, sampleEventData } from 'workforce-webhooks/testing';
import { bundleForWorkerd } from '../support/workerd-bundle.js';

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
    const mf = new Miniflare({
      modules: true,
      script: await bundleForWorkerd(WORKER),
      compatibilityDate: '2026-04-01',
    });
    onTestFinished(() => mf.dispose());
    await mf.ready;
    const send = async (type: 'employee.created' | 'leave.approved', unkept: boolean): Promise<string> => {
      const delivery = await createSignedDelivery({ secret, type, data: sampleEventData(type) });
      const response = await mf.dispatchFetch('http://worker/webhooks/workforce', {
        method: 'POST',
        headers: unkept ? { ...delivery.headers, 'x-unkept': '1' } : delivery.headers,
        body: delivery.body,
      });
      expect(response.status).toBe(202);
      await response.arrayBuffer();
      return delivery.event.id;
    };
    // The first is cut at its limit while its request lives, and its request ends while its handler runs on; the
    // second waits for the slot in a request kept up by waitUntil.
    const cut = await send('employee.created', true);
    const next = await send('leave.approved', false);
    const read = async (): Promise<State> =>
      (await (await mf.dispatchFetch('http://worker/state')).json()) as State;
    let state = await read();
    // A wide bound on a hang: the slot is taken back two attempt limits (2 s) after the attempt was cut.
    const deadline = Date.now() + 60_000;
    while (state.settled < 1 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      state = await read();
    }
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
