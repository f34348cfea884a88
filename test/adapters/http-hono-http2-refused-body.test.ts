// Hono on @hono/node-server over HTTP/2 (h2c; h2 over TLS is the same framing): a body refused before its end is
// answered from the status table without the `connection` header HTTP/2 forbids, which Node would otherwise drop
// with an UnsupportedWarning on stderr at every slow client.
import { connect, createServer, type Http2Server } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import { Hono } from 'hono';
import { expect, it, onTestFinished } from 'vitest';
import { createHonoHandler } from 'workforce-webhooks/hono';
import { leaveApproved } from '../contract/adapter-dedupe.js';
import { WEBHOOK_PATH } from '../contract/adapter-listen.js';
import { watchedReceiver } from '../contract/adapter-suite.js';

it('answers a stalled HTTP/2 body 408 body_timeout, closes its stream, and warns of no connection header', async () => {
  const { receiver, seen } = watchedReceiver({ bodyTimeoutMs: 300 });
  const app = new Hono().all(WEBHOOK_PATH, createHonoHandler(receiver));
  const server = createAdaptorServer({ fetch: app.fetch, createServer }) as unknown as Http2Server;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const warnings: string[] = [];
  const onWarning = (warning: Error): void => {
    warnings.push(`${warning.name}: ${warning.message}`);
  };
  process.on('warning', onWarning);
  onTestFinished(() => {
    process.off('warning', onWarning);
  });
  const client = connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  client.on('error', () => {});
  onTestFinished(() => {
    client.destroy();
  });
  const delivery = await leaveApproved();
  const stream = client.request(
    {
      ':method': 'POST',
      ':path': WEBHOOK_PATH,
      ...delivery.headers,
      'content-length': String(Buffer.byteLength(delivery.body)),
    },
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
  stream.write(delivery.body.slice(0, 20));
  // A generous bound on a hang, not a measure of speed.
  const streamClosed = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), 15_000);
    stream.on('close', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
  expect({ status, body, streamClosed }).toEqual({
    status: 408,
    body: '{"error":"body_timeout"}',
    streamClosed: true,
  });
  expect(warnings.filter((warning) => /connection/i.test(warning))).toEqual([]);
  expect(seen).toEqual([]);
});
