// The adapter contract through `createExpressMiddleware` on a real Express 5 app, and Express's own pitfalls.
import { createServer } from 'node:http';
import express from 'express';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { createReceiver, type Logger } from 'workforce-webhooks';
import { createExpressMiddleware } from 'workforce-webhooks/express';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { expectAnswer, post } from '../contract/adapter-client.js';
import { leaveApproved } from '../contract/adapter-dedupe.js';
import { listen, WEBHOOK_PATH } from '../contract/adapter-listen.js';
import {
  CONTRACT_SECRET,
  describeAdapterContract,
  type MountedApp,
  watchedReceiver,
} from '../contract/adapter-suite.js';

// `app.all`, not `app.post`: the contract checks that the middleware itself answers a GET with 405.
describeAdapterContract('express', async (receiver) => {
  const app = express();
  app.all(WEBHOOK_PATH, createExpressMiddleware(receiver));
  return listen(createServer(app));
});

// express.raw's own limit (default 100 kB) is raised past maxBodyBytes so the core, not Express, refuses 2 MiB.
describeAdapterContract('express with express.raw()', async (receiver) => {
  const app = express();
  app.all(WEBHOOK_PATH, express.raw({ type: '*/*', limit: '4mb' }), createExpressMiddleware(receiver));
  return listen(createServer(app));
});

/** A logger that keeps what it is given, to count the fix line. */
function recordingLogger(): Logger & { readonly lines: { level: string; obj: object; msg?: string }[] } {
  const lines: { level: string; obj: object; msg?: string }[] = [];
  const at =
    (level: string) =>
    (obj: object, msg?: string): void => {
      lines.push({ level, obj, msg });
    };
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

describe('express body parsers', () => {
  let app: MountedApp | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  for (const [name, parser] of [
    ['express.json()', express.json()],
    ["express.text({ type: '*/*' })", express.text({ type: '*/*' })],
  ] as const) {
    it(`${name} in front answers 500 raw_body_unavailable and logs the fix once`, async () => {
      const logger = recordingLogger();
      const receiver = createReceiver({ secret: CONTRACT_SECRET, logger });
      let handled = 0;
      receiver.on('leave.approved', () => {
        handled++;
      });
      const server = express();
      server.use(parser);
      server.post(WEBHOOK_PATH, createExpressMiddleware(receiver));
      app = await listen(createServer(server));
      // Every request completes (no handler waits on a stream the parser already drained).
      for (let i = 0; i < 3; i++) {
        expectAnswer(await post(app.url, await leaveApproved()), 500, { error: 'raw_body_unavailable' });
      }
      await receiver.close();
      expect(handled).toBe(0);
      const fixes = logger.lines.filter((line) => line.msg?.includes('Fix:'));
      expect(fixes).toHaveLength(1);
      expect(fixes[0]!.level).toBe('error');
      // One fix: express.raw() in front would leave oversized and slow bodies to Express's own answers.
      expect(fixes[0]!.msg).toContain('Mount the webhook route before any body parser');
      expect(fixes[0]!.msg).not.toContain('express.raw');
    });
  }

  it('a plain express.text() leaves JSON deliveries alone', async () => {
    const { receiver, seen } = watchedReceiver();
    const server = express();
    server.use(express.text());
    server.post(WEBHOOK_PATH, createExpressMiddleware(receiver));
    app = await listen(createServer(server));
    const delivery = await leaveApproved();
    expectAnswer(await post(app.url, delivery), 202, { received: true });
    await receiver.close();
    expect(seen).toEqual([delivery.event.id]);
  });

  it('the webhook route registered before an app-wide express.json() gets the raw bytes', async () => {
    const { receiver, seen } = watchedReceiver();
    const server = express();
    server.post(WEBHOOK_PATH, createExpressMiddleware(receiver));
    server.use(express.json());
    server.post('/api/echo', (req, res) => {
      res.json(req.body);
    });
    app = await listen(createServer(server));
    const delivery = await leaveApproved();
    expectAnswer(await post(app.url, delivery), 202, { received: true });
    // The rest of the app still parses JSON as before.
    const echo = await fetch(app.url.replace(WEBHOOK_PATH, '/api/echo'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"ok":true}',
    });
    expect(await echo.json()).toEqual({ ok: true });
    await receiver.close();
    expect(seen).toEqual([delivery.event.id]);
  });
});

describe('express with supertest, as a user writes it', () => {
  it('accepts a signed delivery, then answers its copy as a duplicate and refuses a forged one', async () => {
    const receiver = createReceiver({ secret: CONTRACT_SECRET });
    const approved: string[] = [];
    receiver.on('leave.approved', (event) => {
      approved.push(event.data.leaveRequestId);
    });
    const app = express();
    app.post('/webhooks/workforce', createExpressMiddleware(receiver));

    const delivery = await createSignedDelivery({
      secret: CONTRACT_SECRET,
      type: 'leave.approved',
      data: (await leaveApproved()).event.data,
    });
    await request(app).post('/webhooks/workforce').set(delivery.headers).send(delivery.body).expect(202, {
      received: true,
    });
    await request(app)
      .post('/webhooks/workforce')
      .set(delivery.headers)
      .send(delivery.body)
      .expect(200, { received: true, duplicate: true });
    const forged = await createSignedDelivery({ secret: 'whsec_someone_else', type: 'leave.approved' });
    await request(app)
      .post('/webhooks/workforce')
      .set(forged.headers)
      .send(forged.body)
      .expect('content-type', /application\/json/)
      .expect(400, { error: 'signature_mismatch' });
    await receiver.close();
    expect(approved).toEqual([delivery.event.data.leaveRequestId]);
  });
});
