// `receiver.fetch` mounted where a framework calls it with its own request (`app.post(path, receiver.fetch)`): an
// answer from the table with no stack, the adapter to use said once, and no rejection left for the process.
import { createServer } from 'node:http';
import { createAdaptorServer } from '@hono/node-server';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { createReceiver, type Receiver } from 'workforce-webhooks';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { post } from '../contract/adapter-client.js';
import { listen } from '../contract/adapter-listen.js';
import { recordingLogger } from '../support/logger.js';

const SECRET = 'whsec_fetch_misplaced_Hq3z';

const opened: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((close) => close()));
});

type Mounted = { readonly url: string; readonly close: () => Promise<unknown> };

// Each mounts `receiver.fetch` itself as the route's handler, as a first try at wiring it up would.
const mounts: Record<string, (receiver: Receiver) => Promise<Mounted>> = {
  'node:http, http.createServer(receiver.fetch)': (receiver) =>
    listen(createServer(receiver.fetch as unknown as Parameters<typeof createServer>[0])),
  'Express 5, app.post(path, receiver.fetch)': (receiver) => {
    const app = express();
    app.post('/webhooks/workforce', receiver.fetch as unknown as express.RequestHandler);
    return listen(createServer(app));
  },
  'Hono, app.post(path, receiver.fetch)': (receiver) => {
    const app = new Hono();
    app.post('/webhooks/workforce', receiver.fetch as never);
    return listen(createAdaptorServer({ fetch: app.fetch }) as ReturnType<typeof createServer>);
  },
  'Fastify, app.post(path, receiver.fetch)': async (receiver) => {
    const app = Fastify();
    app.post('/webhooks/workforce', receiver.fetch as never);
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as { port: number };
    return { url: `http://127.0.0.1:${port}/webhooks/workforce`, close: () => app.close() };
  },
};

describe('receiver.fetch called with a framework request instead of a Web Request', () => {
  for (const [name, mount] of Object.entries(mounts)) {
    it(`${name}: answers 500 raw_body_unavailable with no stack, and names the adapter to use once`, async () => {
      const logger = recordingLogger();
      const receiver = createReceiver({ secret: SECRET, logger });
      opened.push(() => receiver.close());
      let handled = 0;
      receiver.on('leave.approved', () => {
        handled++;
      });
      const { url, close } = await mount(receiver);
      opened.push(close);
      for (let i = 0; i < 2; i++) {
        const answer = await post(
          url,
          await createSignedDelivery({ secret: SECRET, type: 'leave.approved' }),
        );
        expect({ status: answer.status, body: JSON.parse(answer.text) as unknown }).toEqual({
          status: 500,
          body: { error: 'raw_body_unavailable' },
        });
      }
      expect(handled).toBe(0);
      const said = logger.lines.filter((line) => line.obj.kind === 'fetch_not_a_request');
      expect(said).toHaveLength(1);
      expect(said[0]!.level).toBe('error');
      expect(said[0]!.msg).toContain('createNodeHandler(receiver)');
      expect(said[0]!.msg).toContain('createExpressMiddleware(receiver)');
    });
  }
});
