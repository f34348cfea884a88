// Replays on Cloudflare's workerd called without the request's platform: said once, with the fix (`{ platform: ctx }`),
// however many replays follow and in whichever form; a replay given it runs to its end, kept up by its waitUntil.
import { describe, expect, it } from 'vitest';
import { startTestWorker } from '../support/workerd-worker.js';

const secret = 'whsec_replay_workerd_no_platform';

// A Worker on the memory queue with one attempt per event. Its handler waits on a timer, then fails while
// `state.broken` (the cause not fixed yet) or records the event. Each replay route fixes the cause first: `/replay-id`
// replays by event id, `/replay-letter` the letter as read, `/replay-all` every letter with receiver.replayDeadLetters,
// each without the platform, then answers once the replayed run had time to end in that request (a route that answers
// at once may cut it, which is what the line says); `/replay-kept` replays by id given the request's platform and
// answers at once. `/state` tells what the handlers did, the dead letters kept, the lines logged, and how many
// promises given to waitUntil settled.
const WORKER = `
import { createMemoryQueue, createReceiver } from './src/index.ts';

const state = { broken: true, finished: [], settled: 0, logged: [] };
const logger = {
  debug() {},
  info() {},
  warn: (_obj, msg) => void state.logged.push(msg),
  error: (_obj, msg) => void state.logged.push(msg),
};
const receiver = createReceiver({
  secret: '${secret}',
  logger,
  queue: createMemoryQueue({ concurrency: 1, attempts: 1, handlerTimeoutMs: 2000 }),
  onDeadLetter: () => {},
});
receiver.on('leave.approved', async (event) => {
  await new Promise((resolve) => setTimeout(resolve, 20));
  if (state.broken) throw new Error('calendar down');
  state.finished.push(event.id);
});

const platformOf = (ctx) => ({ waitUntil: (work) => ctx.waitUntil(work.then(() => void state.settled++)) });
const settle = () => new Promise((resolve) => setTimeout(resolve, 300));

export default {
  async fetch(request, _env, ctx) {
    const url = new URL(request.url);
    const id = url.searchParams.get('id');
    if (url.pathname === '/state') {
      const letters = (await receiver.deadLetters()).items.map((letter) => letter.event.id);
      return Response.json({ ...state, letters });
    }
    if (url.pathname !== '/webhooks/workforce') state.broken = false;
    if (url.pathname === '/replay-id') {
      const replayed = await receiver.replay(id);
      await settle();
      return Response.json({ replayed });
    }
    if (url.pathname === '/replay-letter') {
      const letter = (await receiver.deadLetters()).items.find((each) => each.event.id === id);
      const replayed = await receiver.replay(letter);
      await settle();
      return Response.json({ replayed });
    }
    if (url.pathname === '/replay-all') {
      const result = await receiver.replayDeadLetters();
      await settle();
      return Response.json(result);
    }
    if (url.pathname === '/replay-kept')
      return Response.json({ replayed: await receiver.replay(id, { platform: platformOf(ctx) }) });
    return receiver.fetch(request, platformOf(ctx));
  },
};
`;

interface State {
  broken: boolean;
  finished: string[];
  settled: number;
  logged: string[];
  letters: string[];
}

describe('replays on workerd called without the platform of their request', () => {
  it('say so once with the fix, and a replay given it runs to its end', { timeout: 180_000 }, async () => {
    const { mf, deliver, until: poll } = await startTestWorker<State>(WORKER, secret);
    // A wide bound on a hang: each handler takes 20 ms.
    const until = (done: (state: State) => boolean): Promise<State> => poll(done, 60_000);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(await deliver('leave.approved'));
    const [byId, byLetter, inBulk, kept] = ids;
    const failed = await until((state) => state.letters.length === 4 && state.settled === 4);
    expect(failed.letters.length).toBe(4);
    const call = async (path: string): Promise<unknown> =>
      (await mf.dispatchFetch(`http://worker${path}`)).json();
    // The bulk replay comes last, and takes the one letter left then.
    expect(await call(`/replay-id?id=${byId}`)).toEqual({ replayed: true });
    expect(await call(`/replay-letter?id=${byLetter}`)).toEqual({ replayed: true });
    expect(await call(`/replay-kept?id=${kept}`)).toEqual({ replayed: true });
    expect(await until((each) => each.finished.includes(kept!))).toMatchObject({ settled: 5 });
    expect(await call('/replay-all')).toEqual({ replayed: 1, failed: 0 });
    const state = await until((each) => each.finished.length === 4);
    expect({
      finished: [...state.finished].sort(),
      settled: state.settled,
      letters: state.letters,
      // The delivered events' own failures aside.
      logged: state.logged.filter((line) => line.includes('ExecutionContext')),
    }).toEqual({
      finished: [byId, byLetter, inBulk, kept].sort(),
      settled: 5,
      letters: [],
      logged: [
        expect.stringMatching(
          /replayed on Cloudflare Workers with no ExecutionContext.*Fix: .*receiver\.replay\(letter, \{ platform: ctx \}\)/,
        ),
      ],
    });
  });
});
