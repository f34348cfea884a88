// src/body.ts through receiver.fetch: a Content-Length header never lets a body be buffered past maxBodyBytes.
import { describe, expect, it, onTestFinished } from 'vitest';
import { createReceiver } from 'workforce-webhooks';
import { createSignedDelivery } from 'workforce-webhooks/testing';

const SECRET = 'whsec_fetch_body_Qm2';
const URL_ = 'https://hooks.example.com/webhooks/workforce';
const CHUNK = 64 * 1024;

/** A 4 MiB body in 64 KiB chunks, produced only as the reader pulls, counting how many were pulled. */
function countingStream(chunks = 64): { stream: ReadableStream<Uint8Array>; pulled: () => number } {
  let pulled = 0;
  const chunk = new Uint8Array(CHUNK).fill(0x20);
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

describe('receiver.fetch with a Content-Length that does not bound the body', () => {
  // Not a number ('abc', ''), or less than the stream holds (a Request rebuilt around a new body stream keeps the
  // old header): the bytes are counted as they are read, and reading stops at the limit.
  for (const contentLength of ['abc', '', '10']) {
    it(`answers 413 and stops reading at maxBodyBytes when Content-Length is ${JSON.stringify(contentLength)}`, async () => {
      const receiver = createReceiver({ secret: SECRET, maxBodyBytes: 256 * 1024, logger: false });
      onTestFinished(() => receiver.close());
      const { headers } = await createSignedDelivery({ secret: SECRET, type: 'leave.approved' });
      const { stream, pulled } = countingStream();
      const request = new Request(URL_, {
        method: 'POST',
        headers: { ...headers, 'content-length': contentLength },
        body: stream,
        duplex: 'half',
      } as RequestInit);
      const response = await receiver.fetch(request);
      expect(response.status).toBe(413);
      // 256 KiB is four chunks; at most one more of read-ahead.
      expect(pulled()).toBeLessThanOrEqual(6);
    });
  }

  it('still verifies a body whose Content-Length is not digits, when it is within the limit', async () => {
    const receiver = createReceiver({ secret: SECRET, logger: false });
    onTestFinished(() => receiver.close());
    receiver.on('leave.approved', () => {});
    const delivery = await createSignedDelivery({ secret: SECRET, type: 'leave.approved' });
    const request = new Request(URL_, {
      method: 'POST',
      headers: { ...delivery.headers, 'content-length': 'abc' },
      body: new Blob([delivery.body]).stream(),
      duplex: 'half',
    } as RequestInit);
    expect((await receiver.fetch(request)).status).toBe(202);
  });
});
