// The adapter contract through `createFastifyPlugin` on a real Fastify 5 listen, and its parser scoping via inject.
import { Readable } from 'node:stream';
import Fastify, { type FastifyInstance } from 'fastify';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createReceiver } from 'workforce-webhooks';
import { createFastifyPlugin } from 'workforce-webhooks/fastify';
import { leaveApproved } from '../contract/adapter-dedupe.js';
import { WEBHOOK_PATH } from '../contract/adapter-listen.js';
import {
  CONTRACT_SECRET,
  describeAdapterContract,
  type MountedApp,
  watchedReceiver,
} from '../contract/adapter-suite.js';

async function listen(app: FastifyInstance): Promise<MountedApp> {
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  return { url: `${address}${WEBHOOK_PATH}`, close: () => app.close() };
}

type Delivery = Awaited<ReturnType<typeof leaveApproved>>;

// A delivery through inject, as the service sends it (or with other headers, at another path).
const deliver = (
  app: FastifyInstance,
  delivery: Delivery,
  { url = WEBHOOK_PATH, headers = delivery.headers }: { url?: string; headers?: Record<string, string> } = {},
) => app.inject({ method: 'POST', url, headers, payload: delivery.body });

// Keep-alive sockets of the contract's fetch would otherwise hold close() open.
const fastify = (): FastifyInstance => Fastify({ forceCloseConnections: true });

describeAdapterContract('fastify', async (receiver) => {
  const app = fastify();
  await app.register(createFastifyPlugin(receiver, { path: WEBHOOK_PATH }));
  return listen(app);
});

// An app that parses every body its own way before the plugin is registered: the route must not notice.
describeAdapterContract('fastify with app-wide parsers', async (receiver) => {
  const app = fastify();
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) =>
    done(null, { parsedByTheApp: body }),
  );
  app.addContentTypeParser('*', (_request, _payload, done) => done(null, 'eaten by the app'));
  await app.register(createFastifyPlugin(receiver, { path: WEBHOOK_PATH }));
  return listen(app);
});

describe('fastify parser scoping (inject)', () => {
  it("leaves the app's own JSON parsing elsewhere untouched", async () => {
    const { receiver, seen } = watchedReceiver();
    const app = Fastify();
    app.post('/api/echo', async (request) => ({ echoed: request.body }));
    await app.register(createFastifyPlugin(receiver, { path: WEBHOOK_PATH }));
    const delivery = await leaveApproved();
    const answer = await deliver(app, delivery);
    expect({ status: answer.statusCode, body: answer.json() }).toEqual({
      status: 202,
      body: { received: true },
    });
    const echo = await app.inject({ method: 'POST', url: '/api/echo', payload: { ok: true } });
    expect(echo.json()).toEqual({ echoed: { ok: true } });
    // A bad JSON body elsewhere still gets Fastify's own 400.
    const bad = await app.inject({
      method: 'POST',
      url: '/api/echo',
      headers: { 'content-type': 'application/json' },
      payload: '{',
    });
    expect(bad.statusCode).toBe(400);
    await receiver.close();
    expect(seen).toEqual([delivery.event.id]);
  });

  it('mounts under a prefix', async () => {
    const { receiver } = watchedReceiver();
    const app = Fastify();
    await app.register(createFastifyPlugin(receiver), { prefix: '/hooks' });
    const delivery = await leaveApproved();
    const answer = await deliver(app, delivery, { url: '/hooks/webhooks/workforce' });
    expect(answer.statusCode).toBe(202);
  });

  it('answers 413 from the core for a body over maxBodyBytes, with its JSON body', async () => {
    const receiver = createReceiver({ secret: CONTRACT_SECRET, maxBodyBytes: 1024 });
    onTestFinished(() => receiver.close());
    const app = Fastify();
    await app.register(createFastifyPlugin(receiver, { path: WEBHOOK_PATH }));
    const answer = await app.inject({
      method: 'POST',
      url: WEBHOOK_PATH,
      headers: { 'content-type': 'application/json' },
      payload: `{"padding":"${'x'.repeat(2048)}"}`,
    });
    expect({ status: answer.statusCode, body: answer.json() }).toEqual({
      status: 413,
      body: { error: 'payload_too_large' },
    });
  });

  it('accepts a delivery that carries no content type', async () => {
    const { receiver, seen } = watchedReceiver();
    const app = Fastify();
    await app.register(createFastifyPlugin(receiver, { path: WEBHOOK_PATH }));
    const delivery = await leaveApproved();
    const { 'content-type': _, ...headers } = delivery.headers;
    const answer = await deliver(app, delivery, { headers });
    expect(answer.statusCode).toBe(202);
    await receiver.close();
    expect(seen).toEqual([delivery.event.id]);
  });

  it('keeps the exact bytes under every media type, named or caught by the catch-all', async () => {
    const { receiver, seen } = watchedReceiver();
    const app = Fastify();
    await app.register(createFastifyPlugin(receiver, { path: WEBHOOK_PATH }));
    const types = ['application/json; charset=utf-8', 'application/json', 'text/plain', 'application/x-foo'];
    const statuses: number[] = [];
    const ids: string[] = [];
    for (const type of types) {
      const delivery = await leaveApproved();
      ids.push(delivery.event.id);
      const headers = { ...delivery.headers, 'content-type': type };
      const answer = await deliver(app, delivery, { headers });
      statuses.push(answer.statusCode);
    }
    expect(statuses).toEqual([202, 202, 202, 202]);
    await receiver.close();
    expect(seen).toEqual(ids);
  });

  it("reads the stream an app's preParsing hook hands on, bytes unchanged", async () => {
    const { receiver, seen } = watchedReceiver();
    const app = Fastify();
    // A hook that reads the whole request itself and hands on a stream of its own: the socket's stream is spent.
    app.addHook('preParsing', async (_request, _reply, payload) => {
      const chunks: Buffer[] = [];
      for await (const chunk of payload) chunks.push(chunk as Buffer);
      return Readable.from([Buffer.concat(chunks)]);
    });
    await app.register(createFastifyPlugin(receiver, { path: WEBHOOK_PATH }));
    const delivery = await leaveApproved();
    const answer = await deliver(app, delivery);
    expect(answer.statusCode).toBe(202);
    await receiver.close();
    expect(seen).toEqual([delivery.event.id]);
  });

  it('answers 500 raw_body_unavailable, running nothing and naming the encoding once, when a preParsing hook decodes the bytes to text', async () => {
    const errors: string[] = [];
    const logger = {
      debug() {},
      info() {},
      warn() {},
      error: (_: object, msg?: string) => errors.push(msg ?? ''),
    };
    const receiver = createReceiver({ secret: CONTRACT_SECRET, logger });
    onTestFinished(() => receiver.close());
    const seen: string[] = [];
    receiver.on('leave.approved', (event) => {
      seen.push(event.id);
    });
    const app = Fastify();
    app.addHook('preParsing', async (_request, _reply, payload) => payload.setEncoding('utf8'));
    await app.register(createFastifyPlugin(receiver, { path: WEBHOOK_PATH }));
    for (let i = 0; i < 2; i++) {
      const answer = await deliver(app, await leaveApproved());
      expect({ status: answer.statusCode, body: answer.json() }).toEqual({
        status: 500,
        body: { error: 'raw_body_unavailable' },
      });
    }
    expect(seen).toEqual([]);
    const fixes = errors.filter((msg) => msg.includes('Fix:'));
    expect(fixes).toHaveLength(1);
    expect(fixes[0]).toContain('encoding was set');
    expect(fixes[0]).toContain('preParsing');
  });

  it('answers 500 raw_body_unavailable, logging the fix, when an app hook replaces the body', async () => {
    const errors: string[] = [];
    const logger = {
      debug() {},
      info() {},
      warn() {},
      error: (_: object, msg?: string) => errors.push(msg ?? ''),
    };
    const receiver = createReceiver({ secret: CONTRACT_SECRET, logger });
    onTestFinished(() => receiver.close());
    const app = Fastify();
    app.addHook('preHandler', async (request) => {
      request.body = { replaced: true };
    });
    await app.register(createFastifyPlugin(receiver, { path: WEBHOOK_PATH }));
    const delivery = await leaveApproved();
    const answer = await deliver(app, delivery);
    expect({ status: answer.statusCode, body: answer.json() }).toEqual({
      status: 500,
      body: { error: 'raw_body_unavailable' },
    });
    expect(errors.filter((msg) => msg.includes('Fix:'))).toHaveLength(1);
  });
});

describe("fastify errors that are the app's, not the body's", () => {
  it("leaves an app hook's 503 to Fastify, which answers and logs it, instead of a 400 invalid_payload", async () => {
    const { receiver, seen } = watchedReceiver();
    const logged: string[] = [];
    const app = Fastify({
      forceCloseConnections: true,
      logger: { level: 'error', stream: { write: (line: string) => void logged.push(line) } },
    });
    // An app-wide hook (a session store, an auth check) that fails for its own reasons.
    app.addHook('onRequest', async () => {
      throw Object.assign(new Error('session store unreachable'), { statusCode: 503 });
    });
    await app.register(createFastifyPlugin(receiver, { path: WEBHOOK_PATH }));
    const { url, close } = await listen(app);
    onTestFinished(close);
    const delivery = await leaveApproved();
    const answer = await fetch(url, { method: 'POST', headers: delivery.headers, body: delivery.body });
    expect(answer.status).toBe(503);
    expect(await answer.json()).toMatchObject({ statusCode: 503, message: 'session store unreachable' });
    expect(logged.some((line) => line.includes('session store unreachable'))).toBe(true);
    await receiver.close();
    expect(seen).toEqual([]);
  });

  it("hands a rate limiter's 429 to the app's own error handler", async () => {
    const { receiver, seen } = watchedReceiver();
    const app = fastify();
    app.setErrorHandler((error: { statusCode?: number }, _request, reply) => {
      reply.code(error.statusCode ?? 500).send({ error: 'slow_down' });
    });
    app.addHook('preHandler', async () => {
      throw Object.assign(new Error('rate limit exceeded'), { statusCode: 429 });
    });
    await app.register(createFastifyPlugin(receiver, { path: WEBHOOK_PATH }));
    const delivery = await leaveApproved();
    const answer = await deliver(app, delivery);
    expect({ status: answer.statusCode, body: answer.json() }).toEqual({
      status: 429,
      body: { error: 'slow_down' },
    });
    await receiver.close();
    expect(seen).toEqual([]);
  });
});
