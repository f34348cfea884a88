// The adapter contract through `createNodeHandler` on a plain `http.createServer`, and a streamed oversized body.
import { createServer, request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { createReceiver } from 'workforce-webhooks';
import { createNodeHandler } from 'workforce-webhooks/node';
import { expectAnswer, post } from '../contract/adapter-client.js';
import { leaveApproved } from '../contract/adapter-dedupe.js';
import { listen } from '../contract/adapter-listen.js';
import { CONTRACT_SECRET, describeAdapterContract } from '../contract/adapter-suite.js';

describeAdapterContract('node:http', (receiver) => listen(createServer(createNodeHandler(receiver))));

/** POSTs `total` bytes in 64 KiB chunks with no Content-Length (chunked), as a misbehaving sender might. */
function postChunked(url: string, total: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json' } });
    let answered = false;
    req.on('response', (res) => {
      answered = true;
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    // The server answers before the upload ends and closes the connection: later writes may fail, as they should.
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let sent = 0;
    const write = (): void => {
      while (sent < total) {
        sent += chunk.byteLength;
        if (!req.write(chunk)) return void req.once('drain', write);
      }
      req.end();
    };
    write();
  });
}

describe('node:http adapter', () => {
  it('refuses a chunked body as soon as it passes maxBodyBytes, and keeps serving', async () => {
    const receiver = createReceiver({ secret: CONTRACT_SECRET });
    const seen: string[] = [];
    receiver.on('leave.approved', (event) => {
      seen.push(event.id);
    });
    const app = await listen(createServer(createNodeHandler(receiver)));
    try {
      const refused = await postChunked(app.url, 2 * 1024 * 1024);
      expect({ status: refused.status, body: JSON.parse(refused.body) as unknown }).toEqual({
        status: 413,
        body: { error: 'payload_too_large' },
      });
      const next = await leaveApproved();
      expectAnswer(await post(app.url, next), 202, { received: true });
      await receiver.close();
      expect(seen).toEqual([next.event.id]);
    } finally {
      await app.close();
    }
  });
});
