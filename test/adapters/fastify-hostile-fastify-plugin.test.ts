// The Fastify plugin wrapped in fastify-plugin, as apps habitually wrap their plugins: its raw-bytes parsers and
// error handler stay in its own scope, so the app's JSON routes and error answers are the app's as before.
import Fastify, { type FastifyPluginAsync } from 'fastify';
import { describe, expect, it } from 'vitest';
import { createFastifyPlugin } from 'workforce-webhooks/fastify';
import { leaveApproved } from '../contract/adapter-dedupe.js';
import { WEBHOOK_PATH } from '../contract/adapter-listen.js';
import { watchedReceiver } from '../contract/adapter-suite.js';

// What fastify-plugin does to a plugin, and all that Fastify reads of it: the mark that skips encapsulation.
const skipOverride = <T extends FastifyPluginAsync<never>>(plugin: T): T =>
  Object.assign(plugin, { [Symbol.for('skip-override')]: true });

describe('createFastifyPlugin wrapped in fastify-plugin', () => {
  it("leaves the app's JSON parsing and its own 400s to the app, and still takes deliveries", async () => {
    const { receiver, seen } = watchedReceiver();
    const app = Fastify();
    app.post('/api/echo', async (request) => ({ echoed: request.body }));
    await app.register(skipOverride(createFastifyPlugin(receiver, { path: WEBHOOK_PATH })));

    const echo = await app.inject({ method: 'POST', url: '/api/echo', payload: { ok: true } });
    expect({ status: echo.statusCode, body: echo.json() }).toEqual({
      status: 200,
      body: { echoed: { ok: true } },
    });
    const bad = await app.inject({
      method: 'POST',
      url: '/api/echo',
      headers: { 'content-type': 'application/json' },
      payload: '{',
    });
    expect({ status: bad.statusCode, code: bad.json().code }).toEqual({
      status: 400,
      code: 'FST_ERR_CTP_INVALID_JSON_BODY',
    });

    const delivery = await leaveApproved();
    const answer = await app.inject({
      method: 'POST',
      url: WEBHOOK_PATH,
      headers: delivery.headers,
      payload: delivery.body,
    });
    expect({ status: answer.statusCode, body: answer.json() }).toEqual({
      status: 202,
      body: { received: true },
    });
    await receiver.close();
    expect(seen).toEqual([delivery.event.id]);
  });
});
