// A Worker module that makes its receiver at the top level, as the README's Workers example does, with ordering on:
// Workers refuse random values in a module's global scope, so nothing of the receiver may draw one as it is made
// (the ordering's instance id is drawn on its first run). The Worker starts, and ordered events run.
import { Miniflare } from 'miniflare';
import { afterAll, describe, expect, it } from 'vitest';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { bundleForWorkerd } from '../support/workerd-bundle.js';

const SECRET = 'whsec_workers_ordering_top_level';

const WORKER = `
import { byDefaultKeys, createReceiver } from 'workforce-webhooks';
const handled = [];
const receiver = createReceiver({ secret: '${SECRET}', logger: false, ordering: { key: byDefaultKeys() } });
receiver.on('leave.*', (event, ctx) => {
  handled.push({ id: event.id, key: ctx.orderingKey });
});
export default {
  fetch(request, env, ctx) {
    if (new URL(request.url).pathname === '/handled') return Response.json(handled);
    return receiver.fetch(request, env, ctx);
  },
};
`;

const started: Miniflare[] = [];
afterAll(async () => {
  for (const mf of started) await mf.dispose();
});

describe('a Worker whose receiver, ordering on, is made at the top level of its module', () => {
  it('starts, and runs an ordered event with its key', { timeout: 60_000 }, async () => {
    const mf = new Miniflare({
      modules: true,
      script: await bundleForWorkerd(WORKER),
      compatibilityDate: '2026-04-01',
    });
    started.push(mf);
    await mf.ready;
    const leaveRequestId = crypto.randomUUID();
    const delivery = await createSignedDelivery({
      secret: SECRET,
      type: 'leave.approved',
      data: { leaveRequestId } as never,
    });
    const response = await mf.dispatchFetch('http://localhost/webhooks/workforce', {
      method: 'POST',
      headers: delivery.headers,
      body: delivery.body,
    });
    expect(response.status).toBe(202);
    await expect
      .poll(async () => (await mf.dispatchFetch('http://localhost/handled')).json(), { timeout: 10_000 })
      .toEqual([{ id: delivery.event.id, key: leaveRequestId }]);
  });
});
