// The memory queue on Cloudflare's workerd, whose timers are numbers (no ref/unref): every queued event still ends.
import { Miniflare } from 'miniflare';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { bundleForWorkerd } from '../support/workerd-bundle.js';

const secret = 'whsec_memory_queue_workerd_timers';

// A Worker as the README shows one: the receiver in queue mode on the memory queue, its handlers' work handed to
// waitUntil. `/state` tells what its handlers did and how many of the promises given to waitUntil settled.
const WORKER = `
import { createMemoryQueue, createReceiver } from './src/index.ts';

const state = { finished: 0, handedOver: 0, settled: 0 };
const receiver = createReceiver({ secret: '${secret}', queue: createMemoryQueue({ concurrency: 2 }) });
receiver.on('leave.approved', async () => {
  await new Promise((resolve) => setTimeout(resolve, 5));
  state.finished++;
});

export default {
  fetch(request, _env, ctx) {
    if (new URL(request.url).pathname === '/state') return Response.json(state);
    return receiver.fetch(request, {
      waitUntil: (work) => {
        state.handedOver++;
        ctx.waitUntil(work.then(() => void state.settled++));
      },
    });
  },
};
`;

async function workerScript(): Promise<string> {
  return bundleForWorkerd(WORKER);
}

describe('the memory queue on workerd', () => {
  it('ends every queued event, past its concurrency, and settles each promise handed to waitUntil', {
    timeout: 150_000,
  }, async () => {
    const mf = new Miniflare({
      modules: true,
      script: await workerScript(),
      compatibilityDate: '2024-09-23',
    });
    onTestFinished(() => mf.dispose());
    const count = 6;
    let state = { finished: 0, handedOver: 0, settled: 0 };
    // One delivery at a time, each settled before the next: this test is about timers (deliveries at once, past the
    // queue's concurrency, are memory-queue-workerd-waiting-jobs.test.ts's).
    // Six jobs through two slots: before timers were called as workerd has them, the third never started.
    for (let i = 0; i < count; i++) {
      const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
      const response = await mf.dispatchFetch('http://worker/webhooks/workforce', {
        method: 'POST',
        headers: delivery.headers,
        body: delivery.body,
      });
      expect(response.status).toBe(202);
      await response.arrayBuffer();
      // A wide bound on a hang: the handlers take 5 ms each.
      const deadline = Date.now() + 20_000;
      while (state.settled <= i && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 20));
        state = (await (await mf.dispatchFetch('http://worker/state')).json()) as typeof state;
      }
    }
    expect(state).toEqual({ finished: count, handedOver: count, settled: count });
  });
});
