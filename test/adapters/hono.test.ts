// The adapter contract through `createHonoHandler` (on @hono/node-server and through app.request()), and Hono's traps.
import type { Server } from 'node:http';
import { createAdaptorServer } from '@hono/node-server';
import { Hono } from 'hono';
import { validator } from 'hono/validator';
import { describe, expect, it } from 'vitest';
import { createReceiver, type Logger } from 'workforce-webhooks';
import { createHonoHandler } from 'workforce-webhooks/hono';
import { leaveApproved } from '../contract/adapter-dedupe.js';
import { listen, WEBHOOK_PATH } from '../contract/adapter-listen.js';
import { CONTRACT_SECRET, describeAdapterContract, watchedReceiver } from '../contract/adapter-suite.js';

const URL = `http://localhost${WEBHOOK_PATH}`;

// `app.all`, not `app.post`: the contract checks that the handler itself answers a GET with 405.
describeAdapterContract('hono on @hono/node-server', async (receiver) => {
  const app = new Hono().all(WEBHOOK_PATH, createHonoHandler(receiver));
  return listen(createAdaptorServer({ fetch: app.fetch }) as Server);
});

// The same app reached through `app.request()`, the entry Hono's own tests (and `hono/testing`) use.
describeAdapterContract('hono through app.request()', async (receiver) => {
  const app = new Hono().all(WEBHOOK_PATH, createHonoHandler(receiver));
  return listen(createAdaptorServer({ fetch: (request: Request) => app.request(request) }) as Server);
});

/** A logger that keeps what it is given, to count the fix line. */
function recordingLogger(): Logger & { readonly lines: { level: string; msg?: string }[] } {
  const lines: { level: string; msg?: string }[] = [];
  const at =
    (level: string) =>
    (_obj: object, msg?: string): void => {
      lines.push({ level, msg });
    };
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

describe('hono body cache', () => {
  const readers = {
    'c.req.json()': (c: { req: { json(): Promise<unknown> } }) => c.req.json(),
    'c.req.text()': (c: { req: { text(): Promise<unknown> } }) => c.req.text(),
  };
  for (const [name, read] of Object.entries(readers)) {
    it(`${name} in a middleware first answers 500 raw_body_unavailable and logs the fix once`, async () => {
      const logger = recordingLogger();
      const receiver = createReceiver({ secret: CONTRACT_SECRET, logger });
      let handled = 0;
      receiver.on('leave.approved', () => {
        handled++;
      });
      const app = new Hono();
      app.use(async (c, next) => {
        await read(c);
        await next();
      });
      app.post(WEBHOOK_PATH, createHonoHandler(receiver));
      for (let i = 0; i < 3; i++) {
        const response = await app.request((await leaveApproved()).toRequest(URL));
        expect(response.status).toBe(500);
        expect(await response.json()).toEqual({ error: 'raw_body_unavailable' });
      }
      await receiver.close();
      expect(handled).toBe(0);
      const fixes = logger.lines.filter((line) => line.msg?.includes('Fix:'));
      expect(fixes).toHaveLength(1);
      expect(fixes[0]!.level).toBe('error');
      expect(fixes[0]!.msg).toContain("validator('json')");
    });
  }

  it("a validator('json') on the route answers 500 raw_body_unavailable, never a false 400", async () => {
    const receiver = createReceiver({ secret: CONTRACT_SECRET });
    const app = new Hono().post(
      WEBHOOK_PATH,
      validator('json', (value) => value),
      createHonoHandler(receiver),
    );
    const response = await app.request((await leaveApproved()).toRequest(URL));
    expect({ status: response.status, body: await response.json() }).toEqual({
      status: 500,
      body: { error: 'raw_body_unavailable' },
    });
    await receiver.close();
  });

  it('a middleware that locks c.req.raw.body without reading it gets 500 raw_body_unavailable, not a rejection', async () => {
    const logger = recordingLogger();
    const { receiver, seen } = watchedReceiver({ logger });
    const app = new Hono();
    app.use(async (c, next) => {
      c.req.raw.body?.getReader();
      await next();
    });
    app.post(WEBHOOK_PATH, createHonoHandler(receiver));
    const response = await app.request((await leaveApproved()).toRequest(URL));
    expect({ status: response.status, body: await response.json() }).toEqual({
      status: 500,
      body: { error: 'raw_body_unavailable' },
    });
    await receiver.close();
    expect(seen).toEqual([]);
    expect(logger.lines.filter((line) => line.msg?.includes('Fix:'))).toHaveLength(1);
  });

  it('c.req.arrayBuffer() first is fine: the cache holds the bytes as sent', async () => {
    const { receiver, seen } = watchedReceiver();
    const app = new Hono();
    app.use(async (c, next) => {
      await c.req.arrayBuffer();
      await next();
    });
    app.post(WEBHOOK_PATH, createHonoHandler(receiver));
    const delivery = await leaveApproved();
    const response = await app.request(delivery.toRequest(URL));
    expect({ status: response.status, body: await response.json() }).toEqual({
      status: 202,
      body: { received: true },
    });
    await receiver.close();
    expect(seen).toEqual([delivery.event.id]);
  });
});

describe('hono background work', () => {
  it('hands queued work to executionCtx.waitUntil where there is one (Workers)', async () => {
    const { receiver, seen } = watchedReceiver();
    const app = new Hono().post(WEBHOOK_PATH, createHonoHandler(receiver));
    // The shape Workers passes as the third argument of `fetch(request, env, ctx)`.
    const kept: Promise<unknown>[] = [];
    const ctx = {
      waitUntil: (promise: Promise<unknown>) => kept.push(promise),
      passThroughOnException() {},
      props: {},
    };
    const delivery = await leaveApproved();
    const response = await app.fetch(delivery.toRequest(URL), {}, ctx);
    expect(response.status).toBe(202);
    expect(kept).toHaveLength(1);
    await kept[0];
    // The work handed over is the handler run itself: once it settles, the event has been handled.
    expect(seen).toEqual([delivery.event.id]);
    await receiver.close();
  });

  it('hands work to waitUntil for a request with a ctx after one without (same handler, same isolate)', async () => {
    const { receiver, seen } = watchedReceiver();
    const app = new Hono().post(WEBHOOK_PATH, createHonoHandler(receiver));
    // No ctx: app.request() from a scheduled() handler, a Durable Object calling app.fetch(request, env), a test.
    expect((await app.request((await leaveApproved()).toRequest(URL))).status).toBe(202);
    const kept: Promise<unknown>[] = [];
    const ctx = { waitUntil: (p: Promise<unknown>) => kept.push(p), passThroughOnException() {}, props: {} };
    const delivery = await leaveApproved();
    expect((await app.fetch(delivery.toRequest(URL), {}, ctx)).status).toBe(202);
    expect(kept).toHaveLength(1);
    await kept[0];
    expect(seen).toContain(delivery.event.id);
  });

  it('on Node, where c.executionCtx throws, answers as usual and the work still runs', async () => {
    const { receiver, seen } = watchedReceiver();
    const app = new Hono().post(WEBHOOK_PATH, createHonoHandler(receiver));
    app.get('/probe', (c) => {
      expect(() => c.executionCtx).toThrow();
      return c.text('ok');
    });
    expect((await app.request('/probe')).status).toBe(200);
    const delivery = await leaveApproved();
    const response = await app.request(delivery.toRequest(URL));
    expect(response.status).toBe(202);
    await receiver.close();
    expect(seen).toEqual([delivery.event.id]);
  });

  it('keeps headers other middleware set on the context', async () => {
    const receiver = createReceiver({ secret: CONTRACT_SECRET });
    receiver.on('leave.approved', () => {});
    const app = new Hono();
    app.use(async (c, next) => {
      c.header('x-request-id', 'abc');
      await next();
    });
    app.post(WEBHOOK_PATH, createHonoHandler(receiver));
    const response = await app.request((await leaveApproved()).toRequest(URL));
    expect(response.status).toBe(202);
    expect(response.headers.get('x-request-id')).toBe('abc');
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    await receiver.close();
  });
});
