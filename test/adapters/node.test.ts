// The adapter contract through `createNodeHandler` on a plain `http.createServer`, and how its body reader copes
// with bodies in pieces, oversized, cut off or shorter than declared.
import { type ClientRequest, createServer, request } from 'node:http';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createNodeHandler } from 'workforce-webhooks/node';
import { eventually, expectAnswer, post, postChunked } from '../contract/adapter-client.js';
import { leaveApproved } from '../contract/adapter-dedupe.js';
import { listen } from '../contract/adapter-listen.js';
import { describeAdapterContract, watchedReceiver } from '../contract/adapter-suite.js';

describeAdapterContract('node:http', (receiver) => listen(createServer(createNodeHandler(receiver))));

/** The status and text of the answer to `req`; an error after the answer (the server closed early) is ignored. */
function answerTo(req: ClientRequest): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    let answered = false;
    req.on('response', (res) => {
      answered = true;
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
  });
}

describe('node:http adapter', () => {
  it('refuses a chunked body as soon as it passes maxBodyBytes, and keeps serving', async () => {
    const { receiver, seen } = watchedReceiver();
    const app = await listen(createServer(createNodeHandler(receiver)));
    try {
      // Unsigned: the size is refused before the signature is looked at.
      const body = `{"padding":"${'x'.repeat(2 * 1024 * 1024)}"}`;
      const refused = await postChunked(app.url, { body, headers: { 'content-type': 'application/json' } });
      expectAnswer(refused, 413, { error: 'payload_too_large' });
      const next = await leaveApproved();
      expectAnswer(await post(app.url, next), 202, { received: true });
      await receiver.close();
      expect(seen).toEqual([next.event.id]);
    } finally {
      await app.close();
    }
  });

  it('reassembles a signed body sent in several chunks, byte for byte', async () => {
    const { receiver, seen } = watchedReceiver();
    const app = await listen(createServer(createNodeHandler(receiver)));
    try {
      const delivery = await leaveApproved();
      const bytes = Buffer.from(delivery.body);
      const req = request(app.url, { method: 'POST', headers: delivery.headers });
      const answered = answerTo(req);
      // Three writes a tick apart, so the server sees three 'data' events.
      const third = Math.ceil(bytes.length / 3);
      req.write(bytes.subarray(0, third));
      setTimeout(() => {
        req.write(bytes.subarray(third, 2 * third));
        setTimeout(() => req.end(bytes.subarray(2 * third)), 5);
      }, 5);
      const answer = await answered;
      expect({ status: answer.status, body: JSON.parse(answer.body) as unknown }).toEqual({
        status: 202,
        body: { received: true },
      });
      await receiver.close();
      expect(seen).toEqual([delivery.event.id]);
    } finally {
      await app.close();
    }
  });

  it('runs nothing for a body cut off mid-way, and keeps serving', async () => {
    const { receiver, seen } = watchedReceiver();
    const handler = createNodeHandler(receiver);
    const handled: Promise<void>[] = [];
    const server = createServer((req, res) => void handled.push(handler(req, res)));
    const app = await listen(server);
    try {
      const cut = await leaveApproved();
      const { port } = new URL(app.url);
      const socket = connect(Number(port), '127.0.0.1');
      await new Promise<void>((resolve) => socket.once('connect', resolve));
      const head = Object.entries(cut.headers)
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('');
      socket.write(
        `POST /webhooks/workforce HTTP/1.1\r\nhost: 127.0.0.1\r\n${head}content-length: ${Buffer.byteLength(cut.body)}\r\n\r\n`,
      );
      socket.write(cut.body.slice(0, 40));
      await eventually(() => expect(handled).toHaveLength(1));
      socket.destroy();
      // The handler settles (it answers nobody, the socket is gone) instead of waiting forever.
      await handled[0];
      const next = await leaveApproved();
      expectAnswer(await post(app.url, next), 202, { received: true });
      await receiver.close();
      expect(seen).toEqual([next.event.id]);
    } finally {
      await app.close();
    }
  });
});
