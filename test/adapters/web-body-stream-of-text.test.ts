// receiver.fetch with a Request built around a stream that gives text, not bytes (a test's or a wrapper's own
// stream): answered from the table, never a rejection, and never buffered without a count against the limit.
import { describe, expect, it, onTestFinished } from 'vitest';
import { createReceiver } from 'workforce-webhooks';
import { createSignedDelivery } from 'workforce-webhooks/testing';

const SECRET = 'whsec_text_stream_Wc5n';
const URL_ = 'https://hooks.example.com/webhooks/workforce';

const requestOver = (headers: Readonly<Record<string, string>>, body: ReadableStream<unknown>): Request =>
  new Request(URL_, { method: 'POST', headers, body, duplex: 'half' } as RequestInit);

describe('receiver.fetch with a body stream of strings', () => {
  it('answers 400 invalid_payload for a body given in several text chunks, and runs nothing', async () => {
    const receiver = createReceiver({ secret: SECRET, logger: false });
    onTestFinished(() => receiver.close());
    let handled = 0;
    receiver.on('leave.approved', () => {
      handled++;
    });
    const delivery = await createSignedDelivery({ secret: SECRET, type: 'leave.approved' });
    const half = delivery.body.length >> 1;
    const text = new ReadableStream<string>({
      start(controller) {
        controller.enqueue(delivery.body.slice(0, half));
        controller.enqueue(delivery.body.slice(half));
        controller.close();
      },
    });
    const response = await receiver.fetch(requestOver(delivery.headers, text));
    expect({ status: response.status, body: await response.json() }).toEqual({
      status: 400,
      body: { error: 'invalid_payload' },
    });
    expect(handled).toBe(0);
  });

  it('stops reading a text stream far over maxBodyBytes at its first chunk', async () => {
    const receiver = createReceiver({ secret: SECRET, maxBodyBytes: 1024, logger: false });
    onTestFinished(() => receiver.close());
    const { headers } = await createSignedDelivery({ secret: SECRET, type: 'leave.approved' });
    // 4 MiB of text in 64 KiB chunks, produced only as the reader pulls.
    const chunk = ' '.repeat(64 * 1024);
    let pulled = 0;
    const text = new ReadableStream<string>(
      {
        pull(controller) {
          if (pulled === 64) return controller.close();
          pulled++;
          controller.enqueue(chunk);
        },
      },
      { highWaterMark: 0 },
    );
    const response = await receiver.fetch(requestOver(headers, text));
    expect(response.status).toBe(400);
    expect(pulled).toBeLessThanOrEqual(2);
  });
});
