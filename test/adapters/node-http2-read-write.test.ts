// readNodeRequest and writeResponse on Node's HTTP/2 compatibility API (h2c on loopback): an app that routes itself
// hands them http2's request and response, typed as they are, with no cast; a delivery is read and answered, and a
// body refused before its end is answered, then its stream is closed.
import {
  connect,
  createServer,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type IncomingHttpHeaders,
} from 'node:http2';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Receiver } from 'workforce-webhooks';
import { readNodeRequest, writeResponse } from 'workforce-webhooks/node';
import { leaveApproved } from '../contract/adapter-dedupe.js';
import { WEBHOOK_PATH } from '../contract/adapter-listen.js';
import { watchedReceiver } from '../contract/adapter-suite.js';

const FIX = 'route the webhook before anything that reads the request';

// An http2 server whose webhook route reads and answers with the two functions; its origin.
async function serve(receiver: Receiver): Promise<string> {
  const route = async (req: Http2ServerRequest, res: Http2ServerResponse): Promise<void> => {
    const input = await readNodeRequest(req, receiver.maxBodyBytes, FIX, receiver.bodyTimeoutMs);
    writeResponse(res, await receiver.handle(input), receiver.logger);
  };
  const server = createServer((req, res) => {
    if (req.url === WEBHOOK_PATH) void route(req, res);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

interface Exchange {
  readonly status: unknown;
  readonly body: string;
  readonly streamClosed: boolean;
}

// Sends `headers`, then what `send` writes; ends the body only when `end`. Waits up to 4 s for the stream to close.
async function exchange(
  origin: string,
  headers: IncomingHttpHeaders,
  send: (write: (chunk: string) => void) => void,
  end: boolean,
): Promise<Exchange> {
  const client = connect(origin);
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
  if (end) stream.end();
  const streamClosed = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), 4000);
    stream.on('close', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
  return { status, body, streamClosed };
}

describe('readNodeRequest and writeResponse on http2.createServer', () => {
  it('read a signed delivery and answer it: the handler runs once, a redelivery is answered as a duplicate', async () => {
    const { receiver, seen } = watchedReceiver();
    const origin = await serve(receiver);
    const delivery = await leaveApproved();
    const first = await exchange(origin, delivery.headers, (write) => write(delivery.body), true);
    expect(first).toEqual({ status: 202, body: '{"received":true}', streamClosed: true });
    await expect.poll(() => seen).toEqual([delivery.event.id]);
    const again = await exchange(origin, delivery.headers, (write) => write(delivery.body), true);
    expect(again).toEqual({ status: 200, body: '{"received":true,"duplicate":true}', streamClosed: true });
    expect(seen).toEqual([delivery.event.id]);
  });

  it('answer a body that runs over maxBodyBytes while still sending 413, then close its stream', async () => {
    const { receiver, seen } = watchedReceiver({ maxBodyBytes: 1024 });
    const origin = await serve(receiver);
    const { headers } = await leaveApproved();
    // No content-length: the limit is found in the bytes, and the client is still sending.
    const outcome = await exchange(
      origin,
      headers,
      (write) => write(`{"padding":"${'x'.repeat(4096)}`),
      false,
    );
    expect(outcome).toEqual({ status: 413, body: '{"error":"payload_too_large"}', streamClosed: true });
    expect(seen).toEqual([]);
  });
});
