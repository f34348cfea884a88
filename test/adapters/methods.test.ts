// Every method on the webhook path, through every adapter mounted as the examples mount it, on the real framework:
// anything but POST is the receiver's own 405 with `Allow: POST` (a HEAD without a body), never a framework's 404.
import { createServer, type Server } from 'node:http';
import { createAdaptorServer } from '@hono/node-server';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createReceiver, type Receiver } from 'workforce-webhooks';
import { createNextApiHandler } from 'workforce-webhooks/next';
import { createNodeHandler } from 'workforce-webhooks/node';
import { createExampleApp as createExpressApp } from '../../examples/express/server.js';
import { createExampleApp as createFastifyApp } from '../../examples/fastify/server.js';
import { createExampleApp as createHonoApp } from '../../examples/hono/server.js';
import { listen } from '../contract/adapter-listen.js';
import { CONTRACT_SECRET, type MountedApp } from '../contract/adapter-suite.js';

const silent = { log: () => {} };

/** A receiver with the contract's secret, closed after the test. */
function receiverForTest(): Receiver {
  const receiver = createReceiver({ secret: CONTRACT_SECRET });
  onTestFinished(() => receiver.close());
  return receiver;
}

const mounts: Record<string, () => Promise<MountedApp>> = {
  'node:http (createNodeHandler)': () => listen(createServer(createNodeHandler(receiverForTest()))),
  'express (examples/express: app.all)': () => {
    const { app, receiver } = createExpressApp({ secret: CONTRACT_SECRET, ...silent });
    onTestFinished(() => receiver.close());
    return listen(createServer(app));
  },
  'hono (examples/hono: app.all)': () => {
    const { app, receiver } = createHonoApp({ secret: CONTRACT_SECRET, ...silent });
    onTestFinished(() => receiver.close());
    return listen(createAdaptorServer({ fetch: app.fetch }) as Server);
  },
  'fastify (examples/fastify: the plugin)': async () => {
    const { app, receiver } = createFastifyApp({ secret: CONTRACT_SECRET, ...silent });
    onTestFinished(() => receiver.close());
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    return { url: `${address}/webhooks/workforce`, close: () => app.close() };
  },
  'next route handler (examples/next: every method exported)': async () => {
    // The route module itself, so the test holds the example's exports; the real `next start` is in test/e2e.
    process.env.WORKFORCE_WEBHOOK_SECRET ??= CONTRACT_SECRET;
    // By URL: the Next example resolves extensionless imports as Next does, outside this project's typecheck.
    const file = new URL('../../examples/next/app/api/webhooks/workforce/route.ts', import.meta.url);
    const route = (await import(file.href)) as Record<string, (request: Request) => Promise<Response>>;
    return listen(
      createAdaptorServer({
        fetch: (request: Request) => {
          const handler = route[request.method];
          return handler === undefined ? new Response('not exported', { status: 501 }) : handler(request);
        },
      }) as Server,
    );
  },
  'next pages api handler': () => listen(createServer(createNextApiHandler(receiverForTest()))),
  'receiver.fetch on a Web-standard host (@hono/node-server)': () => {
    const receiver = receiverForTest();
    return listen(createAdaptorServer({ fetch: (request: Request) => receiver.fetch(request) }) as Server);
  },
};

describe.each(Object.entries(mounts))('%s', (_name, mount) => {
  it.each(['GET', 'PUT', 'DELETE'])('answers %s with 405 and Allow: POST', async (method) => {
    const app = await mount();
    onTestFinished(() => app.close());
    const response = await fetch(app.url, {
      method,
      redirect: 'manual',
      signal: AbortSignal.timeout(15_000),
    });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.json()).toEqual({ error: 'method_not_allowed' });
  });

  it('answers HEAD with 405, Allow: POST and no body', async () => {
    const app = await mount();
    onTestFinished(() => app.close());
    const response = await fetch(app.url, {
      method: 'HEAD',
      redirect: 'manual',
      signal: AbortSignal.timeout(15_000),
    });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
    expect(await response.text()).toBe('');
  });
});
