// The adapter contract through Next's route handler (real `Request`s) and Pages API handler; the real app is in e2e.
import { createServer, type Server } from 'node:http';
import { createAdaptorServer } from '@hono/node-server';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createReceiver } from 'workforce-webhooks';
import { createNextApiHandler, createNextRouteHandler } from 'workforce-webhooks/next';
import { expectAnswer, post, postChunked } from '../contract/adapter-client.js';
import { leaveApproved } from '../contract/adapter-dedupe.js';
import { listen } from '../contract/adapter-listen.js';
import { CONTRACT_SECRET, describeAdapterContract, watchedReceiver } from '../contract/adapter-suite.js';

// A fetch-to-node bridge serves the route handler the real `Request` objects Next would give it.
describeAdapterContract('next route handler', async (receiver) =>
  listen(createAdaptorServer({ fetch: createNextRouteHandler(receiver) }) as Server),
);

// With `bodyParser: false`, Next hands the API route the untouched Node request, as node:http does here.
describeAdapterContract('next pages api handler', async (receiver) =>
  listen(createServer(createNextApiHandler(receiver))),
);

/** A logger that keeps warnings and errors. */
function recordingLogger(): {
  readonly lines: string[];
  debug(): void;
  info(): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
} {
  const lines: string[] = [];
  const keep = (_obj: object, msg?: string): void => {
    lines.push(msg ?? '');
  };
  return { lines, debug() {}, info() {}, warn: keep, error: keep };
}

describe('next route handler outside a Next request', () => {
  it('answers as usual, runs the work, and says once that after() could not keep it alive', async () => {
    const logger = recordingLogger();
    const { receiver, seen } = watchedReceiver({ logger });
    const POST = createNextRouteHandler(receiver);
    const first = await leaveApproved();
    const second = await leaveApproved();
    expect((await POST(first.toRequest('http://localhost/api/webhooks/workforce'))).status).toBe(202);
    expect((await POST(second.toRequest('http://localhost/api/webhooks/workforce'))).status).toBe(202);
    await receiver.close();
    expect(seen.sort()).toEqual([first.event.id, second.event.id].sort());
    expect(logger.lines.filter((line) => line.includes('after()'))).toHaveLength(1);
  });
});

describe('next route handler behind a route that read the body first', () => {
  for (const framing of ['content-length', 'chunked'] as const) {
    it(`answers 500 raw_body_unavailable over real HTTP and logs the fix once (${framing})`, async () => {
      const logger = recordingLogger();
      const { receiver, seen } = watchedReceiver({ logger });
      const handler = createNextRouteHandler(receiver);
      // A route.ts whose POST peeks at the body before delegating.
      const peekFirst = async (request: Request): Promise<Response> => {
        await request.text();
        return handler(request);
      };
      const app = await listen(createAdaptorServer({ fetch: peekFirst }) as Server);
      onTestFinished(() => app.close());
      for (let i = 0; i < 2; i++) {
        const delivery = await leaveApproved();
        const answer =
          framing === 'chunked' ? await postChunked(app.url, delivery) : await post(app.url, delivery);
        expectAnswer(answer, 500, { error: 'raw_body_unavailable' });
      }
      await receiver.close();
      expect(seen).toEqual([]);
      const fixes = logger.lines.filter((line) => line.includes('Fix:'));
      expect(fixes).toHaveLength(1);
      expect(fixes[0]).toContain('Next route handler');
    });
  }
});

describe('next pages api handler', () => {
  it('answers 500 raw_body_unavailable, naming bodyParser: false, when Next parsed the body', async () => {
    const logger = recordingLogger();
    const receiver = createReceiver({ secret: CONTRACT_SECRET, logger });
    onTestFinished(() => receiver.close());
    const handler = createNextApiHandler(receiver);
    // What Next's default parser leaves behind: the stream drained, the JSON in `req.body`.
    const server = createServer(async (req, res) => {
      let text = '';
      for await (const chunk of req) text += chunk;
      await handler(Object.assign(req, { body: JSON.parse(text) as unknown }), res);
    });
    const app = await listen(server);
    onTestFinished(() => app.close());
    for (let i = 0; i < 2; i++) {
      expectAnswer(await post(app.url, await leaveApproved()), 500, { error: 'raw_body_unavailable' });
    }
    const fixes = logger.lines.filter((line) => line.includes('Fix:'));
    expect(fixes).toHaveLength(1);
    expect(fixes[0]).toContain('bodyParser: false');
  });

  it("keeps the route's promise open until the queued work has run (no after() in the Pages Router)", async () => {
    const receiver = createReceiver({ secret: CONTRACT_SECRET });
    onTestFinished(() => receiver.close());
    const seen: string[] = [];
    receiver.on('leave.approved', async (event) => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      seen.push(event.id);
    });
    const handler = createNextApiHandler(receiver);
    const runs: Promise<void>[] = [];
    const app = await listen(createServer((req, res) => void runs.push(handler(req, res))));
    onTestFinished(() => app.close());
    const delivery = await leaveApproved();
    expectAnswer(await post(app.url, delivery), 202, { received: true });
    await runs[0];
    expect(seen).toEqual([delivery.event.id]);
  });
});
