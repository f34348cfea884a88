// A middleware that sends the response's headers before the webhook route (res.flushHeaders()): the answer is still
// ended, never left open until the sender gives up, a 2xx already sent is never left standing for a refused
// delivery, and the fix is said once.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { createReceiver, type Receiver } from 'workforce-webhooks';
import { createExpressMiddleware } from 'workforce-webhooks/express';
import { createNodeHandler } from 'workforce-webhooks/node';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { eventually } from '../contract/adapter-client.js';
import { listen } from '../contract/adapter-listen.js';
import { recordingLogger } from '../support/logger.js';

const SECRET = 'whsec_headers_sent_Tq7w';

const opened: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((close) => close()));
});

/** What the sender gets: the whole answer, or the name of the error that ended its read. */
type Outcome = { readonly status: number; readonly text: string } | { readonly failed: string };

// The hang bound is wide: a response left open would otherwise wait for the server's own timeout (minutes).
async function deliver(url: string, secret = SECRET): Promise<Outcome> {
  const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: delivery.headers,
      body: delivery.body,
      signal: AbortSignal.timeout(10_000),
    });
    return { status: response.status, text: await response.text() };
  } catch (error) {
    return { failed: (error as Error).name };
  }
}

const flushFirst = (res: ServerResponse): void => {
  res.flushHeaders();
};

const apps: Record<string, (receiver: Receiver) => ReturnType<typeof createServer>> = {
  'node:http': (receiver) => {
    const webhooks = createNodeHandler(receiver);
    return createServer((req: IncomingMessage, res: ServerResponse) => {
      flushFirst(res);
      void webhooks(req, res);
    });
  },
  'Express 5': (receiver) => {
    const app = express();
    app.use((_req, res, next) => {
      flushFirst(res);
      next();
    });
    app.all('/webhooks/workforce', createExpressMiddleware(receiver));
    return createServer(app);
  },
};

describe('an answer whose headers the app sent before the webhook route', () => {
  for (const [name, serve] of Object.entries(apps)) {
    it(`${name}: ends the response of an accepted delivery, and says the fix once`, async () => {
      const logger = recordingLogger();
      const receiver = createReceiver({ secret: SECRET, logger });
      opened.push(() => receiver.close());
      let handled = 0;
      receiver.on('leave.approved', () => {
        handled++;
      });
      const { url, close } = await listen(serve(receiver));
      opened.push(close);
      // The status the sender reads is the one the middleware sent (200); the answer no longer hangs on it.
      expect(await deliver(url)).toEqual({ status: 200, text: '' });
      expect(await deliver(url)).toEqual({ status: 200, text: '' });
      await eventually(() => expect(handled).toBe(2), { tries: 500, intervalMs: 20 });
      const said = logger.lines.filter((line) => line.obj.kind === 'headers_sent');
      expect(said).toHaveLength(1);
      expect(said[0]!.level).toBe('error');
      expect(said[0]!.msg).toContain('Fix: mount the webhook route before any middleware');
    });

    it(`${name}: cuts a 2xx already sent when the delivery is refused, so the sender sends it again`, async () => {
      const receiver = createReceiver({ secret: SECRET, logger: false });
      opened.push(() => receiver.close());
      const { url, close } = await listen(serve(receiver));
      opened.push(close);
      // A forgery (400): the 200 on the wire must not stand as a complete answer. A cut connection fails the
      // read at once; a response left open fails it only at the bound, as a TimeoutError.
      const outcome = await deliver(url, 'whsec_not_the_endpoint_secret');
      expect(outcome).toHaveProperty('failed');
      expect(outcome).not.toEqual({ failed: 'TimeoutError' });
    });
  }
});

// Writes the head of a delivery declaring far more bytes than it sends, then stalls; resolves with whether the
// server closed the connection within a wide bound on a hang.
function stalledDelivery(url: string, headers: Readonly<Record<string, string>>): Promise<boolean> {
  const { hostname, port, pathname } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(false);
    }, 15_000);
    socket.on('error', () => {});
    // Read what comes: a socket nobody reads never sees the server's end.
    socket.resume();
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(true);
    });
    socket.on('connect', () => {
      const lines = [`POST ${pathname} HTTP/1.1`, `host: ${hostname}:${port}`];
      for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
      socket.write(`${lines.join('\r\n')}\r\ncontent-length: ${64 * 1024 * 1024}\r\n\r\n{"id":`);
    });
  });
}

describe('an answer whose headers the app sent before the webhook route, for a body left unread', () => {
  it('closes the connection instead of waiting on the rest of a refused body', async () => {
    const receiver = createReceiver({ secret: SECRET, logger: false });
    opened.push(() => receiver.close());
    const webhooks = createNodeHandler(receiver);
    // The middleware's own status is not a 2xx: the sender already reads a failure, whatever comes next.
    const server = createServer((req, res) => {
      res.statusCode = 503;
      res.flushHeaders();
      void webhooks(req, res);
    });
    const { url, close } = await listen(server);
    opened.push(close);
    const { headers } = await createSignedDelivery({ secret: SECRET, type: 'leave.approved' });
    // Declared over maxBodyBytes: refused 413 unread, and the 20 bytes sent are all there will ever be.
    expect(await stalledDelivery(url, headers)).toBe(true);
  });
});
