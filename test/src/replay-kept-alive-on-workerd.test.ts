// Replays on Cloudflare's workerd, called from an admin request: given the request's platform, each replayed event runs
// to its end in that request (kept up by its waitUntil), and one whose request the platform ends is a dead letter again.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Miniflare } from 'miniflare';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { bundleForWorkerd } from '../support/workerd-bundle.js';

const secret = 'whsec_replay_kept_alive_on_workerd';

// A Worker on the memory queue with one slot and one attempt per event. Each leave.approved handler waits on a timer,
// then on a fetch to a loopback server (real I/O, which workerd cancels once the request that made it has ended), then
// fails while `state.broken` (the cause not fixed yet) or records the event. Each employee.created handler holds the
// slot for half a second. `/replay-all` fixes the cause and replays every dead letter with receiver.replayDeadLetters;
// `/replay-one?id=` fixes it and replays the letter of that event, as read, with the queue's replay. Both hand the
// request's platform to the replay. A request with an `x-unkept` header gets its waitUntil called but does not pass
// the work on to the platform's: it ends with its answer, as one does that Workers end past their waitUntil cap.
// `/state` tells what the handlers did, the dead letters kept and reported, and how the promises given to waitUntil
// ended.
const worker = (origin: string) => `
import { createMemoryQueue, createReceiver } from './src/index.ts';

const state = { broken: true, waitMs: 20, started: [], finished: [], handedOver: 0, settled: 0, failed: [], reported: [] };
const queue = createMemoryQueue({ concurrency: 1, attempts: 1, handlerTimeoutMs: 2000 });
const receiver = createReceiver({
  secret: '${secret}',
  queue,
  onDeadLetter: (letter) => void state.reported.push(letter.event.id + ' ' + (letter.error?.code ?? letter.error?.message)),
});
receiver.on('leave.approved', async (event) => {
  state.started.push(event.id);
  await new Promise((resolve) => setTimeout(resolve, state.waitMs));
  const answer = await fetch('${origin}/work?event=' + event.id);
  await answer.text();
  if (state.broken) throw new Error('calendar down');
  state.finished.push(event.id);
});
receiver.on('employee.created', async (event) => {
  state.started.push(event.id);
  await new Promise((resolve) => setTimeout(resolve, 500));
  state.finished.push(event.id);
});

// The request's platform: its waitUntil, counted, and passed on to the Worker's unless the request is unkept.
const platformOf = (request, ctx) => ({
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

export default {
  async fetch(request, _env, ctx) {
    const url = new URL(request.url);
    if (url.pathname === '/state') {
      const letters = (await receiver.deadLetters()).items.map(
        (letter) => letter.event.id + ' ' + (letter.error?.code ?? letter.error?.message),
      );
      return Response.json({ ...state, letters });
    }
    if (url.pathname === '/replay-all') {
      state.broken = false;
      return Response.json(await receiver.replayDeadLetters({}, { platform: platformOf(request, ctx) }));
    }
    if (url.pathname === '/replay-one') {
      state.broken = false;
      const id = url.searchParams.get('id');
      const letter = (await receiver.deadLetters()).items.find((each) => each.event.id === id);
      const replayed = await queue.replay(id, { failedAt: letter.failedAt, platform: platformOf(request, ctx) });
      // With \`?hold=\`: the handler waits a second, and the answer comes once it has started.
      if (url.searchParams.has('hold')) {
        state.waitMs = 1000;
        await new Promise((resolve) => setTimeout(resolve, 200));
        state.waitMs = 20;
      }
      return Response.json({ replayed });
    }
    return receiver.fetch(request, platformOf(request, ctx));
  },
};
`;

async function workerScript(origin: string): Promise<string> {
  return bundleForWorkerd(worker(origin));
}

interface State {
  broken: boolean;
  waitMs: number;
  started: string[];
  finished: string[];
  handedOver: number;
  settled: number;
  failed: string[];
  reported: string[];
  letters: string[];
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

const readState = async (mf: Miniflare): Promise<State> =>
  (await (await mf.dispatchFetch('http://worker/state')).json()) as State;

/** The Worker's state once `done` holds of it, or when a wide bound on a hang passed. */
async function stateWhen(mf: Miniflare, done: (state: State) => boolean): Promise<State> {
  let state = await readState(mf);
  const deadline = Date.now() + 60_000;
  while (!done(state) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    state = await readState(mf);
  }
  return state;
}

/** Delivers events of `type`, kept by their requests' waitUntil unless `unkept`, each answered 202. */
async function deliver(mf: Miniflare, type: string, count: number, unkept = false): Promise<string[]> {
  const deliveries = await Promise.all(
    Array.from({ length: count }, () => createSignedDelivery({ secret, type })),
  );
  const statuses = await Promise.all(
    deliveries.map(async (delivery) => {
      const response = await mf.dispatchFetch('http://worker/webhooks/workforce', {
        method: 'POST',
        headers: unkept ? { ...delivery.headers, 'x-unkept': '1' } : delivery.headers,
        body: delivery.body,
      });
      await response.arrayBuffer();
      return response.status;
    }),
  );
  expect(statuses).toEqual(deliveries.map(() => 202));
  return deliveries.map((delivery) => delivery.event.id);
}

/** Delivers `count` leave.approved events that fail, and waits until each is a dead letter. */
async function deadLetters(mf: Miniflare, count: number): Promise<string[]> {
  const ids = await deliver(mf, 'leave.approved', count);
  const state = await stateWhen(mf, (each) => each.letters.length === count && each.settled === count);
  expect(sorted(state.letters)).toEqual(
    sorted(ids.map((id) => `${id} workforce-webhooks: 1 handler(s) failed`)),
  );
  return ids;
}

const sorted = (list: readonly string[]): string[] => [...list].sort();

describe('replays called from a request on workerd, given its platform', () => {
  it('replayDeadLetters runs each replayed event to its end in that request, once, kept up by its waitUntil', {
    timeout: 180_000,
  }, async () => {
    const { origin, calls } = await loopback();
    const mf = await start(await workerScript(origin));
    const ids = await deadLetters(mf, 3);
    const answer = await mf.dispatchFetch('http://worker/replay-all');
    expect(await answer.json()).toEqual({ replayed: 3, failed: 0 });
    // The three replays queue behind one slot: two wait for their turn after the admin request has answered.
    const state = await stateWhen(mf, (each) => each.settled === 6);
    expect({
      finished: sorted(state.finished),
      // Each ran twice in all: its failed delivery and its replay.
      fetched: sorted(calls),
      handedOver: state.handedOver,
      settled: state.settled,
      failed: state.failed,
      letters: state.letters,
    }).toEqual({
      finished: sorted(ids),
      fetched: sorted([...ids, ...ids]),
      handedOver: 6,
      settled: 6,
      failed: [],
      letters: [],
    });
  });

  it('the queue replay of one letter runs it to its end in that request', { timeout: 180_000 }, async () => {
    const { origin } = await loopback();
    const mf = await start(await workerScript(origin));
    const [id] = await deadLetters(mf, 1);
    const answer = await mf.dispatchFetch(`http://worker/replay-one?id=${id}`);
    expect(await answer.json()).toEqual({ replayed: true });
    const state = await stateWhen(mf, (each) => each.settled === 2);
    expect({
      finished: state.finished,
      settled: state.settled,
      failed: state.failed,
      letters: state.letters,
    }).toEqual({ finished: [id], settled: 2, failed: [], letters: [] });
  });

  it('makes a replayed event whose request the platform ended before its turn a dead letter again', {
    timeout: 180_000,
  }, async () => {
    const { origin } = await loopback();
    const mf = await start(await workerScript(origin));
    const [id] = await deadLetters(mf, 1);
    // The slot is held for half a second; the replay waits for it in a request that ends with its answer (its turn,
    // given when the slot frees, is taken back one attempt's limit later); a delivery after it waits in a request kept
    // up by waitUntil.
    const [holder] = await deliver(mf, 'employee.created', 1);
    const answer = await mf.dispatchFetch(`http://worker/replay-one?id=${id}`, {
      headers: { 'x-unkept': '1' },
    });
    expect(await answer.json()).toEqual({ replayed: true });
    const [last] = await deliver(mf, 'leave.approved', 1);
    const state = await stateWhen(mf, (each) => each.settled === 3);
    expect({
      finished: state.finished,
      letters: state.letters,
      reported: state.reported.slice(1),
      settled: state.settled,
      failed: state.failed,
    }).toEqual({
      finished: [holder, last],
      letters: [`${id} queue_unavailable`],
      reported: [`${id} queue_unavailable`],
      settled: 3,
      failed: [],
    });
  });

  it('makes a replayed event whose request the platform ended while its handler ran a dead letter again, and frees its slot', {
    timeout: 180_000,
  }, async () => {
    const { origin } = await loopback();
    const mf = await start(await workerScript(origin));
    const [id] = await deadLetters(mf, 1);
    // The replay starts at once in a request that ends with its answer, its handler waiting on a timer of that
    // request; a delivery after it waits for the slot in a request kept up by waitUntil.
    const answer = await mf.dispatchFetch(`http://worker/replay-one?id=${id}&hold=1`, {
      headers: { 'x-unkept': '1' },
    });
    expect(await answer.json()).toEqual({ replayed: true });
    const [last] = await deliver(mf, 'leave.approved', 1);
    const state = await stateWhen(mf, (each) => each.settled === 2);
    expect({
      started: state.started.slice(1),
      finished: state.finished,
      letters: state.letters,
      reported: state.reported.slice(1),
      settled: state.settled,
      failed: state.failed,
    }).toEqual({
      started: [id, last],
      finished: [last],
      letters: [`${id} queue_unavailable`],
      reported: [`${id} queue_unavailable`],
      settled: 2,
      failed: [],
    });
  });
});
