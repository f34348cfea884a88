// `receiver.fetch` as a Worker module's own handler (`export default { fetch: receiver.fetch }`, or the receiver
// itself as the default export): Workers call it as fetch(request, env, ctx), and the queued work is still handed to
// `ctx.waitUntil`, so an accepted event is handled after its 202 instead of ended with the request. Called with no
// context at all, the loss is said once with the fix.
import { Miniflare } from 'miniflare';
import { afterAll, describe, expect, it } from 'vitest';
import { createReceiver } from 'workforce-webhooks';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { eventually } from '../contract/adapter-client.js';
import { bundleForWorkerd } from '../support/workerd-bundle.js';

const SECRET = 'whsec_workers_handler_Vd8r';
const URL_ = 'https://hooks.example.com/webhooks/workforce';

describe('receiver.fetch called as Workers call a handler, with env second and ctx third', () => {
  it("hands the queued work to the third argument's waitUntil", async () => {
    const receiver = createReceiver({ secret: SECRET, logger: false });
    let handled = 0;
    receiver.on('leave.approved', () => {
      handled++;
    });
    const kept: Promise<unknown>[] = [];
    const env = { WORKFORCE_WEBHOOK_SECRET: SECRET };
    const ctx = { waitUntil: (work: Promise<unknown>) => kept.push(work) };
    const delivery = await createSignedDelivery({ secret: SECRET, type: 'leave.approved' });
    const fetch = receiver.fetch as (request: Request, env: unknown, ctx: unknown) => Promise<Response>;
    const response = await fetch(delivery.toRequest(URL_), env, ctx);
    expect(response.status).toBe(202);
    expect(kept).toHaveLength(1);
    await kept[0];
    expect(handled).toBe(1);
    await receiver.close();
  });
});

// A Worker around one receiver: `/handled` says which events finished, `/lines` what the receiver logged, and every
// other path is `deliver(request, env, ctx)`, with `app` a Hono app whose webhook route is createHonoHandler(receiver).
const worker = (deliver: string): string => `
import { Hono } from 'hono';
import { createReceiver } from 'workforce-webhooks';
import { createHonoHandler } from 'workforce-webhooks/hono';
const finished = [];
const lines = [];
const keep = (obj, msg) => lines.push({ kind: obj.kind, msg });
const logger = { debug() {}, info() {}, warn: keep, error: keep };
const receiver = createReceiver({ secret: '${SECRET}', logger });
receiver.on('leave.approved', async (event) => {
  // Well after the 202: only the request's waitUntil lets workerd run it to its end.
  await new Promise((resolve) => setTimeout(resolve, 300));
  finished.push(event.id);
});
const handler = { fetch: receiver.fetch };
const app = new Hono().all('/webhooks/workforce', createHonoHandler(receiver));
export default {
  fetch(request, env, ctx) {
    const { pathname } = new URL(request.url);
    if (pathname === '/handled') return Response.json(finished);
    if (pathname === '/lines') return Response.json(lines);
    return ${deliver};
  },
};
`;

/** A Worker bundled from the sources (`bundleForWorkerd`), started on workerd. */
async function startWorker(script: string): Promise<Miniflare> {
  const mf = new Miniflare({
    modules: true,
    script: await bundleForWorkerd(script),
    compatibilityDate: '2026-04-01',
  });
  await mf.ready;
  return mf;
}

async function deliverTo(mf: Miniflare): Promise<{ id: string; status: number; text: string }> {
  const delivery = await createSignedDelivery({ secret: SECRET, type: 'leave.approved' });
  const response = await mf.dispatchFetch('http://localhost/webhooks/workforce', {
    method: 'POST',
    headers: delivery.headers,
    body: delivery.body,
  });
  return { id: delivery.event.id, status: response.status, text: await response.text() };
}

const get = async <T>(mf: Miniflare, path: string): Promise<T> =>
  (await (await mf.dispatchFetch(`http://localhost${path}`)).json()) as T;

describe('a Worker on workerd', { timeout: 120_000 }, () => {
  const started: Miniflare[] = [];
  afterAll(() => Promise.all(started.map((mf) => mf.dispose())));

  it('whose handler is receiver.fetch answers 202 and still runs the handler to its end after the answer', async () => {
    const mf = await startWorker(worker('handler.fetch(request, env, ctx)'));
    started.push(mf);
    const { id, status, text } = await deliverTo(mf);
    expect([status, text]).toEqual([202, '{"received":true}']);
    // The handler takes 300 ms: a wide bound on a hang.
    await eventually(async () => expect(await get<string[]>(mf, '/handled')).toContain(id), {
      tries: 300,
      intervalMs: 100,
    });
    expect(await get(mf, '/lines')).toEqual([]);
  });

  it('that calls receiver.fetch(request) with no context says once that queued work is lost, with the fix', async () => {
    const mf = await startWorker(worker('receiver.fetch(request)'));
    started.push(mf);
    expect((await deliverTo(mf)).status).toBe(202);
    expect((await deliverTo(mf)).status).toBe(202);
    const lines = await get<Array<{ kind?: string; msg: string }>>(mf, '/lines');
    expect(lines.map((line) => line.kind)).toEqual(['wait_until_missing']);
    expect(lines[0]!.msg).toContain('Fix: pass the ExecutionContext');
  });

  it('with Hono called with no context says once that queued work is lost, with the fix', async () => {
    const mf = await startWorker(worker('app.fetch(request, env)'));
    started.push(mf);
    expect((await deliverTo(mf)).status).toBe(202);
    expect((await deliverTo(mf)).status).toBe(202);
    const lines = await get<Array<{ kind?: string; msg: string }>>(mf, '/lines');
    expect(lines.map((line) => line.kind)).toEqual(['wait_until_missing']);
    expect(lines[0]!.msg).toContain('Fix: hand Hono the Worker');
  });

  it('with Hono handed the context runs the handler to its end, quiet', async () => {
    const mf = await startWorker(worker('app.fetch(request, env, ctx)'));
    started.push(mf);
    const { id, status } = await deliverTo(mf);
    expect(status).toBe(202);
    await eventually(async () => expect(await get<string[]>(mf, '/handled')).toContain(id), {
      tries: 300,
      intervalMs: 100,
    });
    expect(await get(mf, '/lines')).toEqual([]);
  });
});
