// Inline mode on Cloudflare's workerd: a run answered 202 whose attempt then fails is handed to the memory queue for
// its retry, kept up by the delivery's waitUntil; when the platform ends that request, before the retry or while the
// run's handlers still ran, the event still ends, a dead letter (`queue_unavailable`), never waiting for good on timers
// that died with the request.
import { describe, expect, it } from 'vitest';
import { startTestWorker } from '../support/workerd-worker.js';

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

describe('inline mode on workerd, a run handed over to the memory queue', () => {
  it("retries in the delivery's request, kept up by its waitUntil", { timeout: 180_000 }, async () => {
    const { send, until } = await start();
    const leave = await send('leave.approved');
    expect(await until(1, 0)).toEqual({
      started: [leave, leave],
      finished: [leave],
      settled: 1,
      letters: [],
      deadLetters: [],
    });
  });

  it('is in deadLetters() when the platform ended that request before the retry', {
    timeout: 180_000,
  }, async () => {
    const { send, until } = await start();
    const lost = await send('leave.approved', { unkept: true });
    // Past the retry's due time and one more limit. Inline deliveries meanwhile never give the queue a turn.
    await new Promise((r) => setTimeout(r, 3000));
    const next = await send('employee.created', { status: 200 });
    expect(await until(0, 1)).toEqual({
      started: [lost],
      finished: [next],
      settled: 0,
      // One attempt made: the letter says it waited for its second.
      letters: [`${lost} queue_unavailable 1`],
      deadLetters: [`${lost} queue_unavailable`],
    });
  });

  it('is a dead letter when the platform ended that request while its handlers ran, found by the next delivery', {
    timeout: 180_000,
  }, async () => {
    const { send, until } = await start();
    const lost = await send('leave.cancelled', { unkept: true });
    // Past the run's limit and one more.
    await new Promise((r) => setTimeout(r, 3000));
    const next = await send('employee.created', { status: 200 });
    expect(await until(0, 1)).toEqual({
      started: [lost],
      finished: [next],
      settled: 0,
      letters: [`${lost} queue_unavailable 1`],
      deadLetters: [`${lost} queue_unavailable`],
    });
  });
});
