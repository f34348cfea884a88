// The Web-standard entry and the Next adapters with odd Requests and Next's own resolver, and the secret mistakes
// through every adapter over loopback: behaviours no other test pins.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { apiResolver } from 'next/dist/server/api-utils/node/api-resolver.js';
import { NextRequest } from 'next/server.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createReceiver, type Receiver } from 'workforce-webhooks';
import { createExpressMiddleware } from 'workforce-webhooks/express';
import { createFastifyPlugin } from 'workforce-webhooks/fastify';
import { createHonoHandler } from 'workforce-webhooks/hono';
import { createNextApiHandler, createNextRouteHandler } from 'workforce-webhooks/next';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { type Answer, post, send } from '../contract/adapter-client.js';
import { listen } from '../contract/adapter-listen.js';
import { type LogLine, recordingLogger } from '../support/logger.js';

const SECRET = 'whsec_web_pins_Lr8vQ2';
const URL_ = 'https://hooks.example.com/webhooks/workforce';
const encoder = new TextEncoder();

const opened: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((close) => close()));
});

function receiverFor(options: Partial<Parameters<typeof createReceiver>[0]> = {}): Receiver {
  const receiver = createReceiver({ secret: SECRET, ...options });
  receiver.on('leave.approved', () => {});
  opened.push(() => receiver.close());
  return receiver;
}

const delivery = (secret = SECRET) => createSignedDelivery({ secret, type: 'leave.approved' });
const loud = (lines: LogLine[]) => lines.filter((l) => l.level === 'warn' || l.level === 'error');
const json = async (response: Response) => ({ status: response.status, body: await response.json() });
const withinTable = (answer: Answer, status: number, body: object) =>
  expect({ status: answer.status, body: JSON.parse(answer.text) as unknown }).toEqual({ status, body });

describe('receiver.fetch with odd Requests', () => {
  it('answers 408 for a Request aborted mid-body (request.signal), never hanging', async () => {
    const receiver = receiverFor({ bodyTimeoutMs: 200, logger: false });
    const controller = new AbortController();
    const { headers } = await delivery();
    const request = new Request(URL_, {
      method: 'POST',
      headers,
      body: new ReadableStream<Uint8Array>({
        start: (c) => c.enqueue(encoder.encode('{"id":')),
        pull: () => new Promise(() => {}),
      }),
      duplex: 'half',
      signal: controller.signal,
    } as RequestInit);
    setTimeout(() => controller.abort(), 20);
    expect(await json(await receiver.fetch(request))).toEqual({
      status: 408,
      body: { error: 'body_timeout' },
    });
  });

  it('answers HEAD, OPTIONS, PUT, DELETE and an extension method 405 with Allow: POST, reading nothing', async () => {
    const logger = recordingLogger();
    const receiver = receiverFor({ logger });
    for (const method of ['HEAD', 'OPTIONS', 'PUT', 'DELETE', 'PROPFIND', 'get']) {
      const body =
        method === 'HEAD' || method === 'get'
          ? null
          : new ReadableStream({ pull: () => new Promise(() => {}) });
      const request = new Request(URL_, { method, body, duplex: 'half' } as RequestInit);
      const response = await receiver.fetch(request);
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
      expect(await response.json()).toEqual({ error: 'method_not_allowed' });
      expect(request.bodyUsed).toBe(false);
    }
    expect(loud(logger.lines)).toEqual([]);
  });

  it('refuses a duplicated Svc-Signature 400 malformed_signature and a duplicated Svc-Event-Id 400 invalid_payload', async () => {
    const receiver = receiverFor({ logger: false });
    const d = await delivery();
    const twice = (name: string) => {
      const headers = new Headers(d.headers);
      headers.append(name, d.headers[name]!);
      return new Request(URL_, { method: 'POST', headers, body: d.body });
    };
    expect(await json(await receiver.fetch(twice('svc-signature')))).toEqual({
      status: 400,
      body: { error: 'malformed_signature' },
    });
    expect(await json(await receiver.fetch(twice('svc-event-id')))).toEqual({
      status: 400,
      body: { error: 'invalid_payload' },
    });
  });

  it('verifies the bytes as sent under a Content-Encoding header, refusing a compressed body as a mismatch', async () => {
    const receiver = receiverFor({ logger: false });
    const d = await delivery();
    const gz = new Uint8Array(
      await new Response(
        new Blob([d.body]).stream().pipeThrough(new CompressionStream('gzip')),
      ).arrayBuffer(),
    );
    const request = new Request(URL_, {
      method: 'POST',
      headers: { ...d.headers, 'content-encoding': 'gzip' },
      body: gz,
    });
    expect(await json(await receiver.fetch(request))).toEqual({
      status: 400,
      body: { error: 'signature_mismatch' },
    });
  });
});

describe('Next route handler with a NextRequest', () => {
  it('answers a NextRequest 202 and one whose body was read 500 raw_body_unavailable', async () => {
    const receiver = receiverFor({ logger: false });
    const POST = createNextRouteHandler(receiver);
    const d = await delivery();
    const request = new NextRequest('https://app.example.com/api/webhooks/workforce', {
      method: 'POST',
      headers: d.headers,
      body: d.body,
    });
    expect((await POST(request)).status).toBe(202);
    const read = new NextRequest('https://app.example.com/api/webhooks/workforce', {
      method: 'POST',
      headers: (await delivery()).headers,
      body: '{}',
    });
    await read.json();
    expect(await json(await POST(read))).toEqual({ status: 500, body: { error: 'raw_body_unavailable' } });
  });
});

/** A Pages Router API route as Next runs it: Next's own apiResolver, with the route file's `config`. */
async function pagesRoute(receiver: Receiver, bodyParser: boolean) {
  const handler = createNextApiHandler(receiver);
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    void apiResolver(
      req,
      res,
      {},
      { default: handler, config: { api: { bodyParser } } },
      {} as never,
      false,
      false,
      '/api/webhooks',
    );
  });
  const app = await listen(server);
  opened.push(() => app.close());
  return app;
}

describe("Next Pages Router through Next's apiResolver", () => {
  it('with bodyParser left on: 500 raw_body_unavailable, the `config` line to add logged once, a GET 405', async () => {
    const logger = recordingLogger();
    const app = await pagesRoute(receiverFor({ logger }), true);
    for (let i = 0; i < 3; i++)
      withinTable(await post(app.url, await delivery()), 500, { error: 'raw_body_unavailable' });
    const fixes = loud(logger.lines);
    expect(fixes).toHaveLength(1);
    expect(fixes[0]!.msg).toContain('export const config = { api: { bodyParser: false } }');
    expect((await send(app.url, { method: 'GET' })).status).toBe(405);
  });

  it('with bodyParser: false: 202, quiet', async () => {
    const logger = recordingLogger();
    const app = await pagesRoute(receiverFor({ logger }), false);
    withinTable(await post(app.url, await delivery()), 202, { received: true });
    expect(loud(logger.lines)).toEqual([]);
  });
});

describe('Express with a parser in front that leaves JSON alone', () => {
  for (const [name, parser] of [
    ['express.raw() (octet-stream only)', express.raw()],
    ['express.urlencoded()', express.urlencoded({ extended: false })],
  ] as const) {
    it(`${name}: 202, quiet`, async () => {
      const logger = recordingLogger();
      const app = express();
      app.use(parser);
      app.all('/webhooks/workforce', createExpressMiddleware(receiverFor({ logger })));
      const mounted = await listen(createServer(app));
      opened.push(() => mounted.close());
      for (let i = 0; i < 2; i++) expect((await post(mounted.url, await delivery())).status).toBe(202);
      expect(loud(logger.lines)).toEqual([]);
    });
  }
});

describe('secret mistakes through every adapter, over loopback', () => {
  type Mount = (receiver: Receiver) => Promise<string>;
  const served = async (server: Server): Promise<string> => {
    const app = await listen(server);
    opened.push(() => app.close());
    return app.url;
  };
  const mounts: Record<string, Mount> = {
    'receiver.fetch (via @hono/node-server)': (receiver) =>
      served(createAdaptorServer({ fetch: (r: Request) => receiver.fetch(r) }) as Server),
    'next route handler': (receiver) =>
      served(createAdaptorServer({ fetch: createNextRouteHandler(receiver) }) as Server),
    'next pages handler (apiResolver, bodyParser: false)': async (receiver) =>
      (await pagesRoute(receiver, false)).url,
    express: (receiver) => {
      const app = express();
      app.all('/webhooks/workforce', createExpressMiddleware(receiver));
      app.use(express.json());
      return served(createServer(app));
    },
    hono: (receiver) => {
      const app = new Hono();
      app.all('/webhooks/workforce', createHonoHandler(receiver));
      return served(createAdaptorServer({ fetch: app.fetch }) as Server);
    },
    fastify: async (receiver) => {
      const app = Fastify();
      await app.register(createFastifyPlugin(receiver));
      await app.listen({ port: 0, host: '127.0.0.1' });
      opened.push(() => app.close());
      return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/webhooks/workforce`;
    },
  };
  for (const [name, mount] of Object.entries(mounts)) {
    it(`${name}: a wrong secret and an unset one are each said once, answered from the table`, async () => {
      const wrongLog = recordingLogger();
      const wrongUrl = await mount(receiverFor({ secret: 'whsec_not_this_one', logger: wrongLog }));
      const unsetLog = recordingLogger();
      const unsetUrl = await mount(receiverFor({ secret: () => undefined, logger: unsetLog }));
      for (let i = 0; i < 3; i++) {
        withinTable(await post(wrongUrl, await delivery()), 400, { error: 'signature_mismatch' });
        withinTable(await post(unsetUrl, await delivery()), 500, { error: 'not_configured' });
      }
      expect(loud(wrongLog.lines).map((l) => l.msg)).toEqual([
        expect.stringContaining("Is this the endpoint's current `whsec_` secret?"),
      ]);
      expect(loud(unsetLog.lines).map((l) => l.msg)).toEqual([
        expect.stringContaining('Set WORKFORCE_WEBHOOK_SECRET'),
      ]);
    });
  }
});

describe('a secret decoded to bytes (base64 of the part after whsec_)', () => {
  it('is refused loudly: a throw at createReceiver, or one line and 500 not_configured from a function', async () => {
    const bytes = Buffer.from('c2VjcmV0', 'base64');
    expect(() => createReceiver({ secret: bytes as never, logger: false })).toThrow(/secret must be/);
    const logger = recordingLogger();
    const receiver = receiverFor({ secret: (() => bytes) as never, logger });
    const d = await delivery();
    for (let i = 0; i < 2; i++) {
      const answer = await receiver.handle({
        method: 'POST',
        headers: d.headers,
        body: encoder.encode(d.body),
      });
      expect(answer.status).toBe(500);
    }
    expect(loud(logger.lines).filter((l) => /secret must be/.test(l.msg ?? ''))).toHaveLength(1);
  });
});
