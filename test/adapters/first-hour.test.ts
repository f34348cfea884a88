// The first-hour mistakes of an app, each said once with its fix: a request stream read or decoded before the route,
// express.raw() in front of it, and a secret pasted with its quotes or without its `whsec_` prefix.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Fastify, { type FastifyRequest } from 'fastify';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createReceiver, type Receiver } from 'workforce-webhooks';
import { createExpressMiddleware } from 'workforce-webhooks/express';
import { createFastifyPlugin } from 'workforce-webhooks/fastify';
import { createNodeHandler } from 'workforce-webhooks/node';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { post } from '../contract/adapter-client.js';
import { listen } from '../contract/adapter-listen.js';
import { type LogLine, recordingLogger } from '../support/logger.js';

const SECRET = 'whsec_first_hour_Vb6';
const encoder = new TextEncoder();

const loud = (lines: LogLine[]): LogLine[] => lines.filter((l) => l.level === 'warn' || l.level === 'error');
const fixes = (lines: LogLine[]): LogLine[] =>
  lines.filter((l) => l.level === 'error' && l.msg?.includes('Fix:') === true);

/** A receiver that counts the deliveries its handler ran, closed when the test ends. */
function countingReceiver(logger: ReturnType<typeof recordingLogger>): {
  receiver: Receiver;
  handled: () => number;
} {
  const receiver = createReceiver({ secret: SECRET, logger, bodyTimeoutMs: 2_000 });
  onTestFinished(() => receiver.close());
  let handled = 0;
  receiver.on('leave.approved', () => {
    handled++;
  });
  return { receiver, handled: () => handled };
}

const delivery = () => createSignedDelivery({ secret: SECRET, type: 'leave.approved' });

describe('fastify with an app hook that drained request.raw first', () => {
  for (const hook of ['onRequest', 'preParsing'] as const) {
    it(`answers 500 raw_body_unavailable and logs the fix once, naming the hook (${hook})`, async () => {
      const logger = recordingLogger();
      const { receiver, handled } = countingReceiver(logger);
      const app = Fastify();
      // An app-wide hook keeping the raw text for its own use, reading the socket's stream to its end.
      app.addHook(hook, async (request: FastifyRequest & { rawText?: string }) => {
        const chunks: Buffer[] = [];
        for await (const chunk of request.raw) chunks.push(chunk as Buffer);
        request.rawText = Buffer.concat(chunks).toString();
      });
      await app.register(createFastifyPlugin(receiver));
      await app.listen({ port: 0, host: '127.0.0.1' });
      onTestFinished(() => app.close());
      const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/webhooks/workforce`;
      const statuses: number[] = [];
      for (let i = 0; i < 2; i++) statuses.push((await post(url, await delivery())).status);
      expect(statuses).toEqual([500, 500]);
      expect(handled()).toBe(0);
      const said = fixes(logger.lines);
      expect(said).toHaveLength(1);
      expect(said[0]!.msg).toContain('the request stream was read before the webhook route');
      expect(said[0]!.msg).toContain('onRequest, preParsing');
    });
  }
});

describe("a middleware that set the request stream's encoding", () => {
  it('Express: answers 500 raw_body_unavailable and names the encoding once, with the fix', async () => {
    const logger = recordingLogger();
    const { receiver, handled } = countingReceiver(logger);
    const app = express();
    // The raw-body collector of older webhook guides, calling next() without waiting for the end.
    app.use((req: express.Request & { rawBody?: string }, _res, next) => {
      req.setEncoding('utf8');
      req.rawBody = '';
      req.on('data', (chunk: string) => {
        req.rawBody += chunk;
      });
      next();
    });
    app.all('/webhooks/workforce', createExpressMiddleware(receiver));
    const mounted = await listen(createServer(app));
    onTestFinished(() => mounted.close());
    const statuses: number[] = [];
    for (let i = 0; i < 2; i++) statuses.push((await post(mounted.url, await delivery())).status);
    expect(statuses).toEqual([500, 500]);
    expect(handled()).toBe(0);
    const said = fixes(logger.lines);
    expect(said).toHaveLength(1);
    expect(said[0]!.msg).toMatch(/encoding was set/);
    expect(said[0]!.msg).toContain('Mount the webhook route before any middleware that reads the request');
  });

  it('node:http: a wrapper that decodes the stream gets 500 raw_body_unavailable and the fix once', async () => {
    const logger = recordingLogger();
    const { receiver, handled } = countingReceiver(logger);
    const handler = createNodeHandler(receiver);
    const mounted = await listen(
      createServer((req, res) => {
        req.setEncoding('utf8');
        void handler(req, res);
      }),
    );
    onTestFinished(() => mounted.close());
    for (let i = 0; i < 2; i++) expect((await post(mounted.url, await delivery())).status).toBe(500);
    expect(handled()).toBe(0);
    const said = fixes(logger.lines);
    expect(said).toHaveLength(1);
    expect(said[0]!.msg).toMatch(/encoding was set/);
  });
});

describe('express.raw() in front of the webhook route', () => {
  it('is said once, with the fix, at the first body it read (before a body over its limit gets its HTML 413)', async () => {
    const logger = recordingLogger();
    const receiver = createReceiver({ secret: SECRET, logger });
    onTestFinished(() => receiver.close());
    receiver.on('leave.approved', () => {});
    const app = express();
    // A common paste from other webhook guides: raw bodies for JSON, app-wide, with its default 100 kB limit.
    app.use(express.raw({ type: 'application/json' }));
    app.all('/webhooks/workforce', createExpressMiddleware(receiver));
    const mounted = await listen(createServer(app));
    onTestFinished(() => mounted.close());
    for (let i = 0; i < 2; i++) expect((await post(mounted.url, await delivery())).status).toBe(202);
    const named = loud(logger.lines).filter((line) => /express\.raw/.test(line.msg ?? ''));
    expect(named).toHaveLength(1);
    expect(named[0]!.msg).toContain('mount the webhook route before express.raw()');
    expect(named[0]!.msg).toContain(`limit: ${receiver.maxBodyBytes}`);
    // A 200 kB delivery, well within maxBodyBytes (1 MiB): Express answers it itself, as the line said.
    const padded = await createSignedDelivery({
      secret: SECRET,
      type: 'leave.approved',
      data: { note: 'x'.repeat(200_000) } as never,
    });
    const big = await post(mounted.url, padded);
    expect(big.status).toBe(413);
    expect(loud(logger.lines)).toHaveLength(1);
  });

  it('keeps quiet when the webhook route comes first and express.raw() serves other routes', async () => {
    const logger = recordingLogger();
    const receiver = createReceiver({ secret: SECRET, logger });
    onTestFinished(() => receiver.close());
    receiver.on('leave.approved', () => {});
    const app = express();
    app.all('/webhooks/workforce', createExpressMiddleware(receiver));
    app.use(express.raw({ type: 'application/json' }));
    const mounted = await listen(createServer(app));
    onTestFinished(() => mounted.close());
    for (let i = 0; i < 2; i++) expect((await post(mounted.url, await delivery())).status).toBe(202);
    expect(loud(logger.lines)).toEqual([]);
  });
});

describe('a secret not in the whsec_ form', () => {
  const deliverThree = async (receiver: Receiver): Promise<number[]> => {
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const d = await delivery();
      const answer = await receiver.handle({
        method: 'POST',
        headers: d.headers,
        body: encoder.encode(d.body),
      });
      statuses.push(answer.status);
    }
    return statuses;
  };

  for (const [name, quoted] of [
    ['double quotes', `"${SECRET}"`],
    ['single quotes', `'${SECRET}'`],
  ] as const) {
    it(`names a secret wrapped in ${name} (an env file that kept them) once, never printing it`, async () => {
      const logger = recordingLogger();
      // WORKFORCE_WEBHOOK_SECRET="whsec_..." read by docker --env-file or a systemd EnvironmentFile keeps them.
      const receiver = createReceiver({ secret: () => quoted, logger });
      receiver.on('leave.approved', () => {});
      expect(await deliverThree(receiver)).toEqual([400, 400, 400]);
      await receiver.close();
      const named = loud(logger.lines).filter((line) => /quot/i.test(line.msg ?? ''));
      expect(named).toHaveLength(1);
      expect(named[0]!.msg).toContain('remove the quotes');
      // One mistake, one line: the quoted value is not also named for its prefix.
      expect(loud(logger.lines).filter((line) => /start\w* with `whsec_`/.test(line.msg ?? ''))).toEqual([]);
      expect(JSON.stringify(logger.lines)).not.toContain(SECRET);
    });
  }

  it('names a secret given without its whsec_ prefix once, at createReceiver, never printing it', () => {
    const logger = recordingLogger();
    // The key is the whole string: without the prefix (as verifiers of other services strip it) nothing verifies.
    const bare = SECRET.slice('whsec_'.length);
    const receiver = createReceiver({ secret: [bare, `${bare}_next`], logger });
    onTestFinished(() => receiver.close());
    const named = loud(logger.lines).filter((line) => /start\w* with `?whsec_/i.test(line.msg ?? ''));
    expect(named).toHaveLength(1);
    expect(named[0]!.msg).toContain('`whsec_` and all');
    expect(JSON.stringify(logger.lines)).not.toContain(bare);
  });

  it('says nothing of a secret in the whsec_ form, alone or in a rotation pair', () => {
    const logger = recordingLogger();
    const receiver = createReceiver({ secret: [SECRET, 'whsec_next_one'], logger });
    onTestFinished(() => receiver.close());
    expect(loud(logger.lines)).toEqual([]);
  });
});
