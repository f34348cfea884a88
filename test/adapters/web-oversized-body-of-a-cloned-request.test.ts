// A streamed body over maxBodyBytes on a Request someone cloned first (as the raw-body fix suggests, to look at the
// body): refused 413 as soon as it passes the limit, not held until the body deadline and answered 408.
import { describe, expect, it, onTestFinished } from 'vitest';
import { createReceiver } from 'workforce-webhooks';
import { createSignedDelivery } from 'workforce-webhooks/testing';

const SECRET = 'whsec_cloned_request_Zp4k';
const URL_ = 'https://hooks.example.com/webhooks/workforce';
const CHUNK = 16 * 1024;

/** A body of `chunks` chunks, produced only as a reader pulls, counting how many were pulled. */
function countingStream(chunks: number): { stream: ReadableStream<Uint8Array>; pulled: () => number } {
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
    { highWaterMark: 0 },
  );
  return { stream, pulled: () => pulled };
}

describe('receiver.fetch with a streamed oversized body on a cloned Request', () => {
  it('answers 413 payload_too_large and stops reading at the limit while the clone is kept unread', async () => {
    // A 413 held back until the body deadline comes out as a 408.
    const receiver = createReceiver({
      secret: SECRET,
      maxBodyBytes: 4 * CHUNK,
      bodyTimeoutMs: 3_000,
      logger: false,
    });
    onTestFinished(() => receiver.close());
    const { headers } = await createSignedDelivery({ secret: SECRET, type: 'leave.approved' });
    const { stream, pulled } = countingStream(256);
    const request = new Request(URL_, {
      method: 'POST',
      headers,
      body: stream,
      duplex: 'half',
    } as RequestInit);
    const copy = request.clone();
    const response = await receiver.fetch(request);
    expect({ status: response.status, body: await response.json() }).toEqual({
      status: 413,
      body: { error: 'payload_too_large' },
    });
    // Four chunks are the limit: the fifth goes over, with at most one more of read-ahead.
    expect(pulled()).toBeLessThanOrEqual(6);
    expect(copy.bodyUsed).toBe(false);
  });
});
