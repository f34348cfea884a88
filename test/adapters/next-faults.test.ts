// The Next adapters given what the other kind of route gets, on an edge bundle, and behind a wrapper that read
// or decoded the Pages route's stream: answered from the status table and said once, never a TypeError.
import { createServer } from 'node:http';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createReceiver, type Receiver } from 'workforce-webhooks';
import { createNextApiHandler, createNextRouteHandler } from 'workforce-webhooks/next';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { post } from '../contract/adapter-client.js';
import { listen } from '../contract/adapter-listen.js';
import { type LogLine, recordingLogger } from '../support/logger.js';

const SECRET = 'whsec_next_faults_Zk7';
const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));
const loud = (lines: LogLine[]): LogLine[] => lines.filter((l) => l.level === 'warn' || l.level === 'error');
const delivery = () => createSignedDelivery({ secret: SECRET, type: 'leave.approved' });

function receiverFor(logger: ReturnType<typeof recordingLogger>): {
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

/** Bundles `source` as an edge route would be: Web conditions, no Node built-ins; answers the unresolved imports. */
async function edgeBundleErrors(source: string): Promise<string[]> {
  const result = await build({
    stdin: { contents: source, resolveDir: here('./'), loader: 'ts' },
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'neutral',
    conditions: ['edge-light', 'worker', 'browser'],
    mainFields: ['module', 'main'],
    // Next provides next/server on the edge; the package's #crypto resolves to Web Crypto there.
    external: ['next/server.js', 'next/server'],
    alias: { '#crypto': here('../../src/crypto/web.ts') },
    logLevel: 'silent',
  }).catch((error: { errors?: Array<{ text: string }> }) => ({ errors: error.errors ?? [] }));
  return result.errors.map((e) => e.text);
}

describe("workforce-webhooks/next in Next's edge runtime", () => {
  it('an App Router route bundles for the edge without Node built-ins', async () => {
    const errors = await edgeBundleErrors(`
      import { createReceiver } from '../../src/index.ts';
      import { createNextRouteHandler } from '../../adapters/next.ts';
      export const runtime = 'edge';
      export const POST = createNextRouteHandler(createReceiver({ secret: () => undefined }));
    `);
    expect(errors).toEqual([]);
  });

  it('a Pages API route with runtime: edge bundles too', async () => {
    const errors = await edgeBundleErrors(`
      import { createReceiver } from '../../src/index.ts';
      import { createNextApiHandler } from '../../adapters/next.ts';
      export const config = { runtime: 'edge' };
      export default createNextApiHandler(createReceiver({ secret: () => undefined }));
    `);
    expect(errors).toEqual([]);
  });
});

describe('createNextApiHandler on a Pages API route with runtime: edge', () => {
  // Next calls the default export with (NextRequest, NextFetchEvent).
  it('answers the Request from the status table and hands the queued work to the event, blaming no bodyParser', async () => {
    const logger = recordingLogger();
    const { receiver, handled } = receiverFor(logger);
    const handler = createNextApiHandler(receiver);
    const kept: Promise<unknown>[] = [];
    const event = {
      waitUntil(work: Promise<unknown>) {
        kept.push(work);
      },
    };
    const response = await handler(
      (await delivery()).toRequest('https://app.example.com/api/webhooks'),
      event,
    );
    expect(response).toBeInstanceOf(Response);
    expect({ status: response.status, body: await response.json() }).toEqual({
      status: 202,
      body: { received: true },
    });
    expect(kept).toHaveLength(1);
    await Promise.all(kept);
    expect(handled()).toBe(1);
    expect(logger.lines.filter((line) => line.msg?.includes('bodyParser'))).toEqual([]);
  });

  it('without a receiver.fetch to answer with: 500 internal_error and one line naming createNextRouteHandler', async () => {
    const logger = recordingLogger();
    const { receiver } = receiverFor(logger);
    const { handle, maxBodyBytes, bodyTimeoutMs } = receiver;
    const handler = createNextApiHandler({ handle, maxBodyBytes, bodyTimeoutMs, logger });
    for (let i = 0; i < 2; i++) {
      const response = await handler((await delivery()).toRequest('https://app.example.com/api/webhooks'));
      expect({ status: response.status, body: await response.json() }).toEqual({
        status: 500,
        body: { error: 'internal_error' },
      });
    }
    const lines = loud(logger.lines);
    expect(lines).toHaveLength(1);
    expect(lines[0]!.msg).toContain('createNextRouteHandler');
  });
});

describe('createNextRouteHandler exported from pages/api (Node runtime)', () => {
  // pages/api/webhooks.ts: export default createNextRouteHandler(receiver);  (the App Router snippet, pasted)
  it('answers 500 internal_error and names createNextApiHandler once, never throwing', async () => {
    const logger = recordingLogger();
    const { receiver, handled } = receiverFor(logger);
    const handler = createNextRouteHandler(receiver) as unknown as (
      req: unknown,
      res: unknown,
    ) => Promise<unknown>;
    const failures: unknown[] = [];
    // What Next's apiResolver does with a handler that throws: its own 500.
    const app = await listen(
      createServer(async (req, res) => {
        try {
          await handler(req, res);
        } catch (error) {
          failures.push(error);
          res.statusCode = 500;
          res.end('Internal Server Error');
        }
      }),
    );
    onTestFinished(() => app.close());
    for (let i = 0; i < 2; i++) {
      const answer = await post(app.url, await delivery());
      expect({ status: answer.status, body: JSON.parse(answer.text) as unknown }).toEqual({
        status: 500,
        body: { error: 'internal_error' },
      });
    }
    expect(failures).toEqual([]);
    expect(handled()).toBe(0);
    const lines = loud(logger.lines);
    expect(lines).toHaveLength(1);
    expect(lines[0]!.msg).toContain('export default createNextApiHandler(receiver)');
  });
});

describe('createNextApiHandler behind a wrapper that touched the stream', () => {
  for (const [name, touch, said] of [
    [
      'read it to its end',
      (req: import('node:http').IncomingMessage, go: () => void) => {
        req.on('data', () => {});
        req.on('end', go);
      },
      'the request stream was read before the webhook route',
    ],
    [
      'set its encoding',
      (req: import('node:http').IncomingMessage, go: () => void) => {
        req.setEncoding('utf8');
        go();
      },
      'encoding was set',
    ],
  ] as const) {
    it(`answers 500 raw_body_unavailable when a wrapper ${name}, saying so once (not bodyParser)`, async () => {
      const logger = recordingLogger();
      const { receiver, handled } = receiverFor(logger);
      const handler = createNextApiHandler(receiver);
      const app = await listen(createServer((req, res) => touch(req, () => void handler(req, res))));
      onTestFinished(() => app.close());
      for (let i = 0; i < 2; i++) expect((await post(app.url, await delivery())).status).toBe(500);
      expect(handled()).toBe(0);
      const lines = loud(logger.lines);
      expect(lines).toHaveLength(1);
      expect(lines[0]!.msg).toContain(said);
      expect(lines[0]!.msg).not.toContain('bodyParser');
    });
  }
});

describe('createNextApiHandler reading the untouched stream', () => {
  it('survives a client that disconnects mid-body and serves the next delivery', async () => {
    const logger = recordingLogger();
    const { receiver, handled } = receiverFor(logger);
    const app = await listen(createServer(createNextApiHandler(receiver)));
    onTestFinished(() => app.close());
    const { port } = new URL(app.url);
    const d = await delivery();
    await new Promise<void>((resolve) => {
      const socket = connect(Number(port), '127.0.0.1', () => {
        const head = Object.entries(d.headers)
          .map(([k, v]) => `${k}: ${v}\r\n`)
          .join('');
        socket.write(
          `POST /webhooks/workforce HTTP/1.1\r\nhost: x\r\n${head}content-length: ${d.body.length}\r\n\r\n${d.body.slice(0, 10)}`,
        );
        setTimeout(() => {
          socket.destroy();
          resolve();
        }, 50);
      });
    });
    expect((await post(app.url, await delivery())).status).toBe(202);
    await receiver.close();
    expect(handled()).toBe(1);
    expect(loud(logger.lines)).toEqual([]);
  });
});
