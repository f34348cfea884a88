// The memory queue on Cloudflare's workerd with more deliveries at once than its concurrency: a job that waits for a
// slot runs in its own request (the one whose waitUntil holds it), never in the request of the job that freed the slot.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Miniflare } from 'miniflare';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { bundleForWorkerd } from '../support/workerd-bundle.js';

const secret = 'whsec_memory_queue_workerd_waiting_jobs';

// A Worker as the README shows one, on the memory queue with one slot (`queue`: the rest of its options). Each
// leave.approved handler waits on a timer (`waitMs`), then on a fetch to a loopback server (real I/O, which workerd
// cancels once the request that made it has ended), then records the event; with `failFirst`, its first attempt
// fails after that. Each employee.created handler never ends, ignoring its signal. A request with an `x-unkept`
// header gets its waitUntil called but does not pass the work on to the platform's: it ends with its answer, as
// one does that Workers end past their waitUntil cap. `/state` tells what the handlers did, the dead letters, and
// how the promises given to waitUntil ended.
const worker = (origin: string, queue: string, failFirst: boolean, waitMs: number) => `
import { createMemoryQueue, createReceiver } from './src/index.ts';

const state = { started: [], finished: [], handedOver: 0, settled: 0, failed: [], deadLetters: [] };
const receiver = createReceiver({
  secret: '${secret}',
  queue: createMemoryQueue({ concurrency: 1, ${queue} }),
  onDeadLetter: (letter) => void state.deadLetters.push(letter.event.id + ' ' + letter.error?.code),
});
receiver.on('leave.approved', async (event, ctx) => {
  state.started.push(event.id);
  await new Promise((resolve) => setTimeout(resolve, ${waitMs}));
  const answer = await fetch('${origin}/work?event=' + event.id);
  await answer.text();
  if (${failFirst} && ctx.attempt === 1) throw new Error('the first attempt fails');
  state.finished.push(event.id);
});
receiver.on('employee.created', async (event) => {
  state.started.push(event.id);
  await new Promise(() => {});
});

export default {
  fetch(request, _env, ctx) {
    if (new URL(request.url).pathname === '/state') return Response.json(state);
    return receiver.fetch(request, {
      waitUntil: (work) => {
        state.handedOver++;
        if (request.headers.has('x-unkept')) return;
        ctx.waitUntil(
          work.then(
            () => void state.settled++,
            (error) => void state.failed.push(String(error)),
          ),
        );
      },
    });
  },
};
`;

async function workerScript(origin: string, queue: string, failFirst = false, waitMs = 20): Promise<string> {
  return bundleForWorkerd(worker(origin, queue, failFirst, waitMs));
}

interface State {
  started: string[];
  finished: string[];
  handedOver: number;
  settled: number;
  failed: string[];
  deadLetters: string[];
}

/** The loopback server the handlers fetch, answering after a short wait: a job holds its slot across real I/O. */
async function loopback(): Promise<{ origin: string; calls: string[] }> {
  const calls: string[] = [];
  const server = createServer((request, response) => {
    calls.push(new URL(request.url ?? '/', 'http://x').searchParams.get('event') ?? '');
    setTimeout(() => response.end('ok'), 30);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  onTestFinished(() => new Promise<void>((done) => server.close(() => done())));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls };
}

/** The Worker on workerd, at a compatibility date past 2024-10-14 (as `wrangler init` sets one today). */
async function start(script: string): Promise<Miniflare> {
  const mf = new Miniflare({ modules: true, script, compatibilityDate: '2026-04-01' });
  onTestFinished(() => mf.dispose());
  await mf.ready;
  return mf;
}

/** Sends every delivery at once and checks each was answered 202. */
async function deliverAtOnce(mf: Miniflare, deliveries: { headers: Record<string, string>; body: string }[]) {
  const statuses = await Promise.all(
    deliveries.map(async (delivery) => {
      const response = await mf.dispatchFetch('http://worker/webhooks/workforce', {
        method: 'POST',
        headers: delivery.headers,
        body: delivery.body,
      });
      await response.arrayBuffer();
      return response.status;
    }),
  );
  expect(statuses).toEqual(deliveries.map(() => 202));
}

const readState = async (mf: Miniflare): Promise<State> =>
  (await (await mf.dispatchFetch('http://worker/state')).json()) as State;

/** The Worker's state once every promise handed to waitUntil ended, or when a wide bound on a hang passed. */
async function whenSettled(mf: Miniflare, count: number): Promise<State> {
  const read = (): Promise<State> => readState(mf);
  let state = await read();
  const deadline = Date.now() + 60_000;
  while (state.settled + state.failed.length < count && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    state = await read();
  }
  return state;
}

const sorted = (list: readonly string[]): string[] => [...list].sort();

describe('the memory queue on workerd, with more deliveries at once than its concurrency', () => {
  it('runs every waiting job to its end, once, each kept alive by its own request', {
    timeout: 180_000,
  }, async () => {
    const { origin, calls } = await loopback();
    const mf = await start(await workerScript(origin, 'attempts: 1'));
    const count = 6;
    const deliveries = await Promise.all(
      Array.from({ length: count }, () => createSignedDelivery({ secret, type: 'leave.approved' })),
    );
    // All at once: one runs, five wait for the slot.
    await deliverAtOnce(mf, deliveries);
    const state = await whenSettled(mf, count);
    const ids = sorted(deliveries.map((delivery) => delivery.event.id));
    expect({
      ...state,
      started: sorted(state.started),
      finished: sorted(state.finished),
      fetched: sorted(calls),
    }).toEqual({
      started: ids,
      finished: ids,
      fetched: ids,
      handedOver: count,
      settled: count,
      failed: [],
      deadLetters: [],
    });
  });

  it("retries in the failed job's own request, and times out handlers that never end", {
    timeout: 180_000,
  }, async () => {
    const { origin, calls } = await loopback();
    const mf = await start(
      await workerScript(origin, 'attempts: 2, backoff: () => 20, handlerTimeoutMs: 300', true),
    );
    const leaves = await Promise.all(
      Array.from({ length: 3 }, () => createSignedDelivery({ secret, type: 'leave.approved' })),
    );
    const stuck = await Promise.all(
      Array.from({ length: 2 }, () => createSignedDelivery({ secret, type: 'employee.created' })),
    );
    await deliverAtOnce(mf, [...leaves, ...stuck]);
    const state = await whenSettled(mf, 5);
    const leaveIds = leaves.map((delivery) => delivery.event.id);
    const stuckIds = stuck.map((delivery) => delivery.event.id);
    expect({
      ...state,
      started: sorted(state.started),
      finished: sorted(state.finished),
      deadLetters: sorted(state.deadLetters),
      fetched: sorted(calls),
    }).toEqual({
      // Two attempts each: the leaves' first fails, the stuck ones' both pass their limit.
      started: sorted([...leaveIds, ...leaveIds, ...stuckIds, ...stuckIds]),
      finished: sorted(leaveIds),
      fetched: sorted([...leaveIds, ...leaveIds]),
      deadLetters: sorted(stuckIds.map((id) => `${id} handler_timeout`)),
      handedOver: 5,
      settled: 5,
      failed: [],
    });
  });
  it('frees the slot of a job whose request ended before its turn, and makes its event a dead letter', {
    timeout: 180_000,
  }, async () => {
    const { origin } = await loopback();
    const mf = await start(await workerScript(origin, 'attempts: 1, handlerTimeoutMs: 2000', false, 500));
    const [first, unkept, last] = await Promise.all(
      Array.from({ length: 3 }, () => createSignedDelivery({ secret, type: 'leave.approved' })),
    );
    // The first holds the slot for half a second; the second waits for it in a request that ends with its answer
    // (its turn, given when the first ends, is taken back one attempt's limit later);
    // the third waits in a request kept up by waitUntil.
    await deliverAtOnce(mf, [first!]);
    await deliverAtOnce(mf, [{ ...unkept!, headers: { ...unkept!.headers, 'x-unkept': '1' } }]);
    await deliverAtOnce(mf, [last!]);
    const deadline = Date.now() + 60_000;
    let state = await readState(mf);
    while (state.settled + state.failed.length < 2 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      state = await readState(mf);
    }
    expect({ ...state, finished: sorted(state.finished) }).toEqual({
      started: [first!.event.id, last!.event.id],
      finished: sorted([first!.event.id, last!.event.id]),
      deadLetters: [`${unkept!.event.id} queue_unavailable`],
      handedOver: 3,
      settled: 2,
      failed: [],
    });
  });
});
