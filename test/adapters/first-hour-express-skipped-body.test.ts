// Express 4's body parsers in front of the webhook route: one that skips the service's body (another Content-Type)
// still sets `req.body = {}` and leaves the stream unread, so the route reads the bytes and the delivery is accepted.
import { createServer } from 'node:http';
import express from 'express';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createReceiver, type Receiver } from 'workforce-webhooks';
import { createExpressMiddleware } from 'workforce-webhooks/express';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { expectAnswer, post } from '../contract/adapter-client.js';
import { listen } from '../contract/adapter-listen.js';
import { type LogLine, recordingLogger } from '../support/logger.js';

const SECRET = 'whsec_first_hour_express4_Rq2';
const PATH = '/webhooks/workforce';

const loud = (lines: LogLine[]): LogLine[] => lines.filter((l) => l.level === 'warn' || l.level === 'error');

type Req = express.Request & { _body?: boolean };

// What body-parser 1 (Express 4's express.urlencoded(), express.text(), express.json()) does first on every
// request: `req.body = req.body || {}`; it then reads and parses the body only when the Content-Type is its own,
// marking the request `_body`.
const express4Parser =
  (type: string) =>
  (req: Req, _res: express.Response, next: express.NextFunction): void => {
    req.body = req.body || {};
    if (req._body === true || req.headers['content-type']?.startsWith(type) !== true) {
      next();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      req._body = true;
      req.body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      next();
    });
  };

/** A receiver whose handler counts what it ran; closed when the test ends. */
function countingReceiver(logger: ReturnType<typeof recordingLogger>): { receiver: Receiver; ran: string[] } {
  const receiver = createReceiver({ secret: SECRET, logger });
  onTestFinished(() => receiver.close());
  const ran: string[] = [];
  receiver.on('leave.approved', (event) => {
    ran.push(event.id);
  });
  return { receiver, ran };
}

async function mount(app: express.Express): Promise<string> {
  const mounted = await listen(createServer(app));
  onTestFinished(() => mounted.close());
  return mounted.url;
}

describe('an Express 4 body parser in front of the webhook route', () => {
  it('that skipped the body (urlencoded, text) leaves the bytes to the route: 202, handled, nothing logged', async () => {
    const logger = recordingLogger();
    const { receiver, ran } = countingReceiver(logger);
    const app = express();
    app.use(express4Parser('application/x-www-form-urlencoded'));
    app.use(express4Parser('text/plain'));
    app.all(PATH, createExpressMiddleware(receiver));
    const url = await mount(app);

    const delivery = await createSignedDelivery({ secret: SECRET, type: 'leave.approved' });
    expectAnswer(await post(url, delivery), 202, { received: true });
    expectAnswer(await post(url, delivery), 200, { received: true, duplicate: true });
    await receiver.close();
    expect(ran).toEqual([delivery.event.id]);
    expect(loud(logger.lines)).toEqual([]);
  });

  it('that parsed the body (json) is still answered 500 raw_body_unavailable with the fix, once', async () => {
    const logger = recordingLogger();
    const { receiver, ran } = countingReceiver(logger);
    const app = express();
    app.use(express4Parser('application/json'));
    app.all(PATH, createExpressMiddleware(receiver));
    const url = await mount(app);

    for (let i = 0; i < 2; i++) {
      const delivery = await createSignedDelivery({ secret: SECRET, type: 'leave.approved' });
      expectAnswer(await post(url, delivery), 500, { error: 'raw_body_unavailable' });
    }
    expect(ran).toEqual([]);
    const said = loud(logger.lines);
    expect(said).toHaveLength(1);
    expect(said[0]!.msg).toContain('Mount the webhook route before any body parser');
  });

  it('whose empty body came from a middleware that drained the stream is answered 500 with the fix, never a hang', async () => {
    const logger = recordingLogger();
    const { receiver, ran } = countingReceiver(logger);
    const app = express();
    // Reads the stream to its end and keeps nothing: the `{}` placeholder stays, the signed bytes are gone.
    app.use((req: Req, _res, next) => {
      req.body = {};
      req.resume();
      req.on('end', () => next());
    });
    app.all(PATH, createExpressMiddleware(receiver));
    const url = await mount(app);

    const delivery = await createSignedDelivery({ secret: SECRET, type: 'leave.approved' });
    expectAnswer(await post(url, delivery), 500, { error: 'raw_body_unavailable' });
    expect(ran).toEqual([]);
    const said = loud(logger.lines);
    expect(said).toHaveLength(1);
    expect(said[0]!.msg).toContain('the request stream was read before the webhook route');
  });
});
