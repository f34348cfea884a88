// The Web-standard entry, `receiver.fetch`: the contract through a node:http bridge, and real `Request`s directly.
import { createServer } from 'node:http';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createReceiver, type Logger, type Receiver } from 'workforce-webhooks';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { deferred } from '../contract/adapter-client.js';
import { leaveApproved } from '../contract/adapter-dedupe.js';
import { listen } from '../contract/adapter-listen.js';
import { CONTRACT_SECRET, describeAdapterContract } from '../contract/adapter-suite.js';

// The smallest Web-standard host: what Bun.serve or Deno.serve do, written on node:http.
function serveFetch(receiver: Receiver): ReturnType<typeof createServer> {
  return createServer(async (req, res) => {
    const headers = new Headers();
    for (let i = 0; i < req.rawHeaders.length; i += 2)
      headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
    const request = new Request(`http://${req.headers.host}${req.url}`, {
      method: req.method,
      headers,
      body: hasBody ? (Readable.toWeb(req) as ReadableStream<Uint8Array>) : null,
      duplex: 'half',
    } as RequestInit);
    const response = await receiver.fetch(request);
    // A refused oversized body is not read to its end: close rather than drain it.
    if (!req.readableEnded) res.setHeader('connection', 'close');
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
  });
}

describeAdapterContract('receiver.fetch', async (receiver) => listen(serveFetch(receiver)));

const URL_ = 'https://hooks.example.com/webhooks/workforce';

/** A streamed body of `chunks` chunks of 64 KiB that counts how many were pulled. */
function countingStream(chunks: number): { stream: ReadableStream<Uint8Array>; pulled: () => number } {
  let pulled = 0;
  const chunk = new Uint8Array(64 * 1024).fill(0x20);
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (pulled === chunks) return controller.close();
        pulled++;
        controller.enqueue(chunk);
      },
    },
    // No read-ahead: a chunk is produced only when the reader asks for it.
    { highWaterMark: 0 },
  );
  return { stream, pulled: () => pulled };
}

describe('receiver.fetch with Request objects', () => {
  it('answers a signed Request 202 and hands the queued work to waitUntil', async () => {
    const receiver = createReceiver({ secret: CONTRACT_SECRET });
    let handled = 0;
    receiver.on('leave.approved', () => {
      handled++;
    });
    const kept: Promise<unknown>[] = [];
    const delivery = await leaveApproved();
    const response = await receiver.fetch(delivery.toRequest(URL_), { waitUntil: (p) => kept.push(p) });
    expect(response.status).toBe(202);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.json()).toEqual({ received: true });
    expect(kept).toHaveLength(1);
    await kept[0];
    expect(handled).toBe(1);
    await receiver.close();
  });

  it('gives waitUntil an inline run that outlives its 202', async () => {
    const receiver = createReceiver({ secret: CONTRACT_SECRET, mode: 'inline', ackDeadlineMs: 50 });
    const gate = deferred();
    let finished = false;
    receiver.on('leave.approved', async () => {
      await gate.promise;
      finished = true;
    });
    const kept: Promise<unknown>[] = [];
    const response = await receiver.fetch((await leaveApproved()).toRequest(URL_), {
      waitUntil: (p) => kept.push(p),
    });
    expect(response.status).toBe(202);
    expect(kept).toHaveLength(1);
    expect(finished).toBe(false);
    gate.resolve();
    await kept[0];
    expect(finished).toBe(true);
    await receiver.close();
  });

  it('answers a GET 405 with Allow: POST without reading anything', async () => {
    const receiver = createReceiver({ secret: CONTRACT_SECRET });
    const response = await receiver.fetch(new Request(URL_));
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
    await receiver.close();
  });

  it('stops reading a streamed body as soon as it passes maxBodyBytes', async () => {
    const receiver = createReceiver({ secret: CONTRACT_SECRET, maxBodyBytes: 256 * 1024 });
    const { stream, pulled } = countingStream(32);
    const { headers } = await leaveApproved();
    const request = new Request(URL_, {
      method: 'POST',
      headers,
      body: stream,
      duplex: 'half',
    } as RequestInit);
    const response = await receiver.fetch(request);
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({ error: 'payload_too_large' });
    // 256 KiB is four chunks: the fifth goes over (one more of read-ahead at most); the rest are never produced.
    expect(pulled()).toBeLessThanOrEqual(6);
    await receiver.close();
  });

  it('refuses a declared Content-Length over the limit before reading', async () => {
    const receiver = createReceiver({ secret: CONTRACT_SECRET, maxBodyBytes: 1024 });
    const { stream, pulled } = countingStream(1);
    const { headers } = await leaveApproved();
    const request = new Request(URL_, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(64 * 1024) },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    const response = await receiver.fetch(request);
    expect(response.status).toBe(413);
    expect(pulled()).toBe(0);
    await receiver.close();
  });

  it('answers 400 invalid_payload when the body stream fails', async () => {
    const receiver = createReceiver({ secret: CONTRACT_SECRET });
    const { headers } = await createSignedDelivery({ secret: CONTRACT_SECRET, type: 'leave.approved' });
    const broken = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.error(new Error('connection reset'));
      },
    });
    const request = new Request(URL_, {
      method: 'POST',
      headers,
      body: broken,
      duplex: 'half',
    } as RequestInit);
    const response = await receiver.fetch(request);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: 'invalid_payload' });
    await receiver.close();
  });
});

/** A logger that keeps the message of every warning and error. */
function recordingLogger(): Logger & { readonly lines: string[] } {
  const lines: string[] = [];
  const keep = (_obj: object, msg?: string): void => {
    lines.push(msg ?? '');
  };
  return { lines, debug() {}, info() {}, warn: keep, error: keep };
}

describe('receiver.fetch with a body something else read', () => {
  // Each makes a signed Request whose body is already spent or held: the answer is the misconfiguration's.
  const spoilers: Record<string, (delivery: Awaited<ReturnType<typeof leaveApproved>>) => Promise<Request>> =
    {
      'streamed, read with text()': async (delivery) => {
        const request = delivery.toRequest(URL_);
        await request.text();
        return request;
      },
      'with a Content-Length, read with arrayBuffer()': async (delivery) => {
        const request = new Request(URL_, {
          method: 'POST',
          headers: {
            ...delivery.headers,
            'content-length': String(new TextEncoder().encode(delivery.body).length),
          },
          body: delivery.body,
        });
        await request.arrayBuffer();
        return request;
      },
      'streamed, locked by a reader that read nothing': async (delivery) => {
        const request = delivery.toRequest(URL_);
        request.body?.getReader();
        return request;
      },
      'with a Content-Length, locked by a reader that read nothing': async (delivery) => {
        const request = new Request(URL_, {
          method: 'POST',
          headers: {
            ...delivery.headers,
            'content-length': String(new TextEncoder().encode(delivery.body).length),
          },
          body: delivery.body,
        });
        request.body?.getReader();
        return request;
      },
    };
  for (const [name, spoil] of Object.entries(spoilers)) {
    it(`answers 500 raw_body_unavailable, never rejects, and logs the fix once: ${name}`, async () => {
      const logger = recordingLogger();
      const receiver = createReceiver({ secret: CONTRACT_SECRET, logger });
      let handled = 0;
      receiver.on('leave.approved', () => {
        handled++;
      });
      for (let i = 0; i < 2; i++) {
        const response = await receiver.fetch(await spoil(await leaveApproved()));
        expect({ status: response.status, body: await response.json() }).toEqual({
          status: 500,
          body: { error: 'raw_body_unavailable' },
        });
      }
      await receiver.close();
      expect(handled).toBe(0);
      const fixes = logger.lines.filter((line) => line.includes('Fix:'));
      expect(fixes).toHaveLength(1);
      expect(fixes[0]).toContain('unread');
    });
  }
});
