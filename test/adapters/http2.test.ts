// Fastify with `http2: true` and createNodeHandler on Node's HTTP/2 compatibility server (h2c; h2 over TLS is the
// same framing). A body refused before its end is answered, then its stream is closed (RST_STREAM with NO_ERROR,
// RFC 9113 section 8.1): HTTP/2 has no `connection: close`, and Node drops that header with an UnsupportedWarning.
import { connect, createServer, type Http2Server } from 'node:http2';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Receiver } from 'workforce-webhooks';
import { createFastifyPlugin } from 'workforce-webhooks/fastify';
import { createNodeHandler } from 'workforce-webhooks/node';
import { leaveApproved } from '../contract/adapter-dedupe.js';
import { WEBHOOK_PATH } from '../contract/adapter-listen.js';
import { watchedReceiver } from '../contract/adapter-suite.js';

interface Http2App {
  readonly origin: string;
  close(): Promise<void>;
}

const mounts: Record<string, (receiver: Receiver) => Promise<Http2App>> = {
  'Fastify (http2: true)': async (receiver) => {
    const app = Fastify({ http2: true });
    await app.register(createFastifyPlugin(receiver, { path: WEBHOOK_PATH }));
    return { origin: await app.listen({ port: 0, host: '127.0.0.1' }), close: () => app.close() };
  },
  'createNodeHandler on http2.createServer': async (receiver) => {
    // The compat request and response are what the handler reads and writes; their types are not node:http's.
    const server: Http2Server = createServer(createNodeHandler(receiver));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return {
      origin: `http://127.0.0.1:${port}`,
      close: () => new Promise<void>((resolve, reject) => server.close((e) => (e ? reject(e) : resolve()))),
    };
  },
};

// What a refused body must leave: the answer, a closed stream, no warning about a `connection` header.
interface Outcome {
  readonly status: unknown;
  readonly body: string;
  readonly streamClosed: boolean;
  readonly warnings: string[];
}

/** Opens a request stream with `headers`, lets `send` write part of a body, never ends it; waits up to 4 s. */
async function refusedBody(
  app: Http2App,
  headers: Record<string, string>,
  send: (write: (chunk: string) => void) => void,
): Promise<Outcome> {
  const warnings: string[] = [];
  const onWarning = (warning: Error): void => {
    warnings.push(`${warning.name}: ${warning.message}`);
  };
  process.on('warning', onWarning);
  onTestFinished(() => {
    process.off('warning', onWarning);
  });
  const client = connect(app.origin);
  client.on('error', () => {});
  onTestFinished(() => {
    client.destroy();
  });
  const stream = client.request(
    { ':method': 'POST', ':path': WEBHOOK_PATH, ...headers },
    { endStream: false },
  );
  stream.on('error', () => {});
  let status: unknown;
  let body = '';
  stream.on('response', (answer) => {
    status = answer[':status'];
  });
  stream.setEncoding('utf8').on('data', (chunk: string) => {
    body += chunk;
  });
  send((chunk) => stream.write(chunk));
  const streamClosed = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), 4000);
    stream.on('close', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
  return { status, body, streamClosed, warnings: warnings.filter((w) => /connection/i.test(w)) };
}

for (const [name, mount] of Object.entries(mounts)) {
  describe(`${name}: a body refused before its end`, () => {
    it('a stalled body is answered 408 body_timeout, then its stream is closed', async () => {
      const { receiver, seen } = watchedReceiver({ bodyTimeoutMs: 300 });
      const app = await mount(receiver);
      onTestFinished(() => app.close());
      const delivery = await leaveApproved();
      const length = String(Buffer.byteLength(delivery.body));
      const outcome = await refusedBody(app, { ...delivery.headers, 'content-length': length }, (write) =>
        write(delivery.body.slice(0, 20)),
      );
      expect(outcome).toEqual({
        status: 408,
        body: '{"error":"body_timeout"}',
        streamClosed: true,
        warnings: [],
      });
      expect(seen).toEqual([]);
    });

    it('a body that runs over maxBodyBytes while still sending is answered 413, then its stream is closed', async () => {
      const { receiver, seen } = watchedReceiver({ maxBodyBytes: 1024 });
      const app = await mount(receiver);
      onTestFinished(() => app.close());
      const { headers } = await leaveApproved();
      // No content-length: the limit is found in the bytes, and the client is still sending.
      const outcome = await refusedBody(app, headers, (write) => write(`{"padding":"${'x'.repeat(4096)}`));
      expect(outcome).toEqual({
        status: 413,
        body: '{"error":"payload_too_large"}',
        streamClosed: true,
        warnings: [],
      });
      expect(seen).toEqual([]);
    });
  });
}
