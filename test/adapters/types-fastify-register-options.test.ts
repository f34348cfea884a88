// `app.register(createFastifyPlugin(receiver), { path })`: the path given to register is the route, and typed.
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { createFastifyPlugin } from 'workforce-webhooks/fastify';
import { leaveApproved } from '../contract/adapter-dedupe.js';
import { watchedReceiver } from '../contract/adapter-suite.js';

describe('fastify register options', () => {
  it('mounts the route at the path given to register, under its prefix', async () => {
    const { receiver, seen } = watchedReceiver();
    const app = Fastify();
    await app.register(createFastifyPlugin(receiver), { prefix: '/hooks', path: '/workforce' });
    const delivery = await leaveApproved();
    const answer = await app.inject({
      method: 'POST',
      url: '/hooks/workforce',
      headers: delivery.headers,
      payload: delivery.body,
    });
    const elsewhere = await app.inject({
      method: 'POST',
      url: '/hooks/webhooks/workforce',
      headers: delivery.headers,
      payload: delivery.body,
    });
    await app.close();
    await receiver.close();
    expect({ at: answer.statusCode, default: elsewhere.statusCode }).toEqual({ at: 202, default: 404 });
    expect(seen).toEqual([delivery.event.id]);
  });
});
