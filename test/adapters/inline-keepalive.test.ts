// Inline mode on serverless adapters: the keep-alive of a run past its 202 lasts until a failed run's retry has run.
import '../support/next-als.js';
import { createServer } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { Hono } from 'hono';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createMemoryQueue, createReceiver } from 'workforce-webhooks';
import { createHonoHandler } from 'workforce-webhooks/hono';
import { createNextApiHandler, createNextRouteHandler } from 'workforce-webhooks/next';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { deferred, post } from '../contract/adapter-client.js';
import { listen } from '../contract/adapter-listen.js';
import { recordingLogger } from '../support/logger.js';

const secret = 'whsec_inline_keepalive_test';

// An inline receiver whose first attempt fails once the sender has its 202 (`answered`), and whose retry, handed
// over to the memory queue, takes 200 ms to succeed.
function failingThenSlow() {
  const receiver = createReceiver({
    secret,
    mode: 'inline',
    ackDeadlineMs: 50,
    queue: createMemoryQueue({ backoff: () => 1, attempts: 3 }),
    logger: recordingLogger(),
  });
  onTestFinished(() => receiver.close({ timeoutMs: 3000 }));
  const answered = deferred();
  const state = { attempts: [] as number[], processed: false };
  receiver.on('leave.approved', async (_event, ctx) => {
    state.attempts.push(ctx.attempt);
    if (ctx.attempt === 1) {
      await answered.promise;
      throw new Error('the calendar is down');
    }
    await sleep(200);
    state.processed = true;
  });
  return { receiver, state, answered: () => answered.resolve() };
}

describe('inline keep-alive covers the retry of a run that failed after its 202', () => {
  it('Hono on Workers: the promise handed to c.executionCtx.waitUntil', async () => {
    const { receiver, state, answered } = failingThenSlow();
    const app = new Hono().post('/webhooks/workforce', createHonoHandler(receiver));
    const kept: Promise<unknown>[] = [];
    const executionCtx = {
      waitUntil: (promise: Promise<unknown>) => void kept.push(promise),
      passThroughOnException() {},
      props: {},
    };
    const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
    const response = await app.fetch(
      delivery.toRequest('http://localhost/webhooks/workforce'),
      {},
      executionCtx,
    );
    expect(response.status).toBe(202);
    answered();
    expect(kept).toHaveLength(1);
    await Promise.all(kept);
    expect(state).toEqual({ attempts: [1, 2], processed: true });
  });

  it("Next Pages Router (real HTTP): the route's promise stays open", async () => {
    const { receiver, state, answered } = failingThenSlow();
    const routes: Promise<void>[] = [];
    const handler = createNextApiHandler(receiver);
    const app = await listen(createServer((req, res) => void routes.push(handler(req, res))));
    onTestFinished(() => app.close());
    const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
    expect((await post(app.url, delivery)).status).toBe(202);
    answered();
    // The platform freezes the function once the route's promise settles.
    await routes[0];
    expect(state).toEqual({ attempts: [1, 2], processed: true });
  });

  it('Next App Router: the task the route handler gives the real after()', async () => {
    // Next's own request scopes, which its real `after()` reads (on the AsyncLocalStorage of next-als).
    const { workAsyncStorage } = await import('next/dist/server/app-render/work-async-storage.external.js');
    const { workUnitAsyncStorage } = await import(
      'next/dist/server/app-render/work-unit-async-storage.external.js'
    );
    type Scope = { run: <T>(store: unknown, run: () => T) => T };
    const { receiver, state, answered } = failingThenSlow();
    const POST = createNextRouteHandler(receiver);
    const kept: Promise<unknown>[] = [];
    // The request scope Next sets up for a route handler; its after-context keeps the tasks, as Next's does.
    const workStore = { afterContext: { after: (task: Promise<unknown>) => void kept.push(task) } };
    const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
    const response = await (workAsyncStorage as unknown as Scope).run(workStore, () =>
      (workUnitAsyncStorage as unknown as Scope).run({ type: 'request' }, () =>
        POST(delivery.toRequest('http://localhost/api/webhooks/workforce')),
      ),
    );
    expect(response.status).toBe(202);
    answered();
    expect(kept).toHaveLength(1);
    await Promise.all(kept);
    expect(state).toEqual({ attempts: [1, 2], processed: true });
  });
});
