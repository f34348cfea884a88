// A client that hangs up while a middleware in front of the webhook route still waits: the route then finds the
// request destroyed, its body cut short. That is no misconfiguration of the app's: nothing is logged as one (the
// "mount the route before any body parser" line is said once per receiver, and a false one would use it up).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { createReceiver, type Receiver } from 'workforce-webhooks';
import { createExpressMiddleware } from 'workforce-webhooks/express';
import { createNextApiHandler } from 'workforce-webhooks/next';
import { createNodeHandler } from 'workforce-webhooks/node';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { deferred } from '../contract/adapter-client.js';
import { listen } from '../contract/adapter-listen.js';
import { recordingLogger } from '../support/logger.js';

const SECRET = 'whsec_client_gone_Nf6t';

const opened: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((close) => close()));
});

type Mounted = { readonly url: string; readonly close: () => Promise<unknown> };

// Calls `next` once the request is gone: a middleware (a session lookup, an auth call) that outlived the client.
const afterClientLeft = (req: IncomingMessage, next: () => void): void => {
  req.on('error', () => {});
  req.once('close', next);
};

// Each app resolves `routed` once the webhook route has answered (to no one).
const apps: Record<string, (receiver: Receiver, routed: () => void) => Promise<Mounted>> = {
  'node:http': (receiver, routed) => {
    const webhooks = createNodeHandler(receiver);
    return listen(
      createServer((req, res) => afterClientLeft(req, () => void webhooks(req, res).then(routed))),
    );
  },
  'Express 5': (receiver, routed) => {
    const app = express();
    const webhooks = createExpressMiddleware(receiver);
    app.post(
      '/webhooks/workforce',
      (req, _res, next) => afterClientLeft(req, next),
      (req, res) => void webhooks(req, res).then(routed),
    );
    return listen(createServer(app));
  },
  'Next Pages Router': (receiver, routed) => {
    const route = createNextApiHandler(receiver);
    return listen(
      createServer((req: IncomingMessage, res: ServerResponse) =>
        afterClientLeft(req, () => void route(req, res).then(routed)),
      ),
    );
  },
};

// Sends the head of a signed delivery and part of its body, then hangs up.
async function hangUpMidBody(url: string): Promise<void> {
  const { hostname, port, pathname } = new URL(url);
  const { headers, body } = await createSignedDelivery({ secret: SECRET, type: 'leave.approved' });
  const socket = connect(Number(port), hostname);
  socket.on('error', () => {});
  const lines = [`POST ${pathname} HTTP/1.1`, `host: ${hostname}:${port}`];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  socket.write(`${lines.join('\r\n')}\r\ncontent-length: ${body.length}\r\n\r\n${body.slice(0, 10)}`, () =>
    socket.destroy(),
  );
}

describe('a request whose client hung up before the webhook route ran', () => {
  for (const [name, mount] of Object.entries(apps)) {
    it(`${name}: runs nothing and logs no misconfiguration`, async () => {
      const logger = recordingLogger();
      const receiver = createReceiver({ secret: SECRET, logger });
      opened.push(() => receiver.close());
      let handled = 0;
      receiver.on('leave.approved', () => {
        handled++;
      });
      const routed = deferred();
      const { url, close } = await mount(receiver, routed.resolve);
      opened.push(close);
      await hangUpMidBody(url);
      await routed.promise;
      expect(handled).toBe(0);
      expect(logger.lines.filter((line) => line.obj.kind === 'raw_body_unavailable')).toEqual([]);
    });
  }
});
