// An adapter factory mounted itself instead of its result (`app.all(path, createExpressMiddleware)`, which code run
// without a type check lets through): refused at once with the line to write, never a request left hanging.
import { createServer } from 'node:http';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ConfigurationError } from 'workforce-webhooks';
import { createExpressMiddleware } from 'workforce-webhooks/express';
import { createFastifyPlugin } from 'workforce-webhooks/fastify';
import { createHonoHandler } from 'workforce-webhooks/hono';
import { createNextApiHandler, createNextRouteHandler } from 'workforce-webhooks/next';
import { createNodeHandler } from 'workforce-webhooks/node';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { listen } from '../contract/adapter-listen.js';

const SECRET = 'whsec_first_hour_uncalled_Pe6';
const PATH = '/webhooks/workforce';
// A wide bound on a hang, not a timing: the answer comes at once.
const HANG_MS = 10_000;

const delivery = () => createSignedDelivery({ secret: SECRET, type: 'leave.approved' });

describe('an adapter factory mounted without being called', () => {
  it('Express: the delivery is answered (500 through the app error handler) with the fix, not left hanging', async () => {
    const errors: string[] = [];
    const app = express();
    app.all(PATH, createExpressMiddleware as never);
    app.use((error: Error, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
      errors.push(error.message);
      res.status(500).json({ error: 'internal_error' });
    });
    const mounted = await listen(createServer(app));
    onTestFinished(() => mounted.close());
    const signed = await delivery();
    const answer = await fetch(mounted.url, {
      method: 'POST',
      headers: signed.headers,
      body: signed.body,
      signal: AbortSignal.timeout(HANG_MS),
    });
    expect(answer.status).toBe(500);
    expect(errors).toEqual([
      expect.stringContaining("app.all('/webhooks/workforce', createExpressMiddleware(receiver))"),
    ]);
  });

  it('Hono: the delivery is answered (500 through onError) with the fix, not left hanging', async () => {
    const errors: string[] = [];
    const app = new Hono().all(PATH, createHonoHandler as never);
    app.onError((error, c) => {
      errors.push(error.message);
      return c.json({ error: 'internal_error' }, 500);
    });
    const signed = await delivery();
    const answer = await app.request(signed.toRequest(`http://localhost${PATH}`));
    expect(answer.status).toBe(500);
    expect(errors).toEqual([
      expect.stringContaining("app.all('/webhooks/workforce', createHonoHandler(receiver))"),
    ]);
  });

  it('Fastify: registering it fails at start-up with the fix, instead of registering no route', async () => {
    const app = Fastify({ pluginTimeout: HANG_MS });
    onTestFinished(() => app.close());
    app.register(createFastifyPlugin as never);
    await expect(app.ready()).rejects.toThrow(
      "app.register(createFastifyPlugin(receiver, { path: '/webhooks/workforce' }))",
    );
  });

  it('node:http, and the Next handlers given a request or Next arguments, throw a ConfigurationError with the fix', () => {
    const request = new Request(`http://localhost${PATH}`, { method: 'POST', body: '{}' });
    for (const [make, fix] of [
      [() => createNodeHandler({ method: 'POST', headers: {} } as never), 'createNodeHandler(receiver)'],
      [
        () => createNextRouteHandler(request as never),
        'export const POST = createNextRouteHandler(receiver)',
      ],
      [
        () => createNextApiHandler({ method: 'POST', headers: {} } as never),
        'export default createNextApiHandler(receiver)',
      ],
    ] as const) {
      expect(make).toThrow(ConfigurationError);
      expect(make).toThrow(fix);
    }
  });
});
