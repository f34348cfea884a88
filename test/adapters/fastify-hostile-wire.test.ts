// The Fastify plugin and the Next Pages API route on a raw HTTP/1.1 socket, as an attacker or an odd proxy writes
// it: Expect: 100-continue, chunked with trailers, a doubled signature, a body at and over maxBodyBytes on a
// keep-alive connection. Every answer is from the status table, and nothing hangs or runs twice.
import { createServer } from 'node:http';
import Fastify from 'fastify';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { ReceiverOptions } from 'workforce-webhooks';
import { createFastifyPlugin } from 'workforce-webhooks/fastify';
import { createNextApiHandler } from 'workforce-webhooks/next';
import { leaveApproved } from '../contract/adapter-dedupe.js';
import { listen, WEBHOOK_PATH } from '../contract/adapter-listen.js';
import { type Mount, watchedReceiver } from '../contract/adapter-suite.js';
import { chunked, openWire, request, requestHead } from '../support/wire.js';

const mounts: Record<string, Mount> = {
  Fastify: async (receiver) => {
    const app = Fastify({ forceCloseConnections: true });
    await app.register(createFastifyPlugin(receiver, { path: WEBHOOK_PATH }));
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    return { url: `${address}${WEBHOOK_PATH}`, close: () => app.close() };
  },
  'Next Pages Router': (receiver) => {
    const route = createNextApiHandler(receiver);
    return listen(createServer((req, res) => void route(req, res)));
  },
};

const json = (body: string | undefined): unknown => (body === undefined ? undefined : JSON.parse(body));

for (const [name, mount] of Object.entries(mounts)) {
  describe(`${name} on a raw socket`, () => {
    const open = async (options: Partial<ReceiverOptions> = {}) => {
      const { receiver, seen } = watchedReceiver(options);
      const app = await mount(receiver);
      onTestFinished(() => app.close());
      return { receiver, seen, wire: await openWire(app.url), url: app.url };
    };

    it('answers 100 Continue to Expect: 100-continue, then 202 for the body', async () => {
      const { receiver, seen, wire, url } = await open();
      const delivery = await leaveApproved();
      const length = String(Buffer.byteLength(delivery.body));
      wire.write(
        requestHead('POST', url, { ...delivery.headers, expect: '100-continue', 'content-length': length }),
      );
      expect((await wire.next())?.status).toBe(100);
      wire.write(delivery.body);
      const answer = await wire.next();
      expect({ status: answer?.status, body: json(answer?.body) }).toEqual({
        status: 202,
        body: { received: true },
      });
      await receiver.close();
      expect(seen).toEqual([delivery.event.id]);
    });

    it('takes a chunked body with trailers as its bytes, and the connection stays open for the next', async () => {
      const { receiver, seen, wire, url } = await open();
      const first = await leaveApproved();
      const bytes = Buffer.from(first.body);
      wire.write(
        requestHead('POST', url, { ...first.headers, 'transfer-encoding': 'chunked', trailer: 'x-note' }),
      );
      wire.write(`${bytes.length.toString(16)}\r\n`);
      wire.write(bytes);
      wire.write('\r\n0\r\nx-note: signed-bytes-end-here\r\n\r\n');
      expect((await wire.next())?.status).toBe(202);
      const second = await leaveApproved();
      wire.write(request('POST', url, second.headers, second.body));
      expect((await wire.next())?.status).toBe(202);
      await receiver.close();
      expect(seen).toEqual([first.event.id, second.event.id]);
    });

    it('answers a doubled Svc-Signature header 400 malformed_signature, running nothing', async () => {
      const { receiver, seen, wire, url } = await open();
      const delivery = await leaveApproved();
      const signature = delivery.headers['svc-signature'] ?? delivery.headers['Svc-Signature'];
      expect(signature).toBeDefined();
      const head = requestHead('POST', url, {
        ...delivery.headers,
        'content-length': String(Buffer.byteLength(delivery.body)),
      }).replace(/\r\n\r\n$/, `\r\nSvc-Signature: ${signature}\r\n\r\n`);
      wire.write(head + delivery.body);
      const answer = await wire.next();
      expect({ status: answer?.status, body: json(answer?.body) }).toEqual({
        status: 400,
        body: { error: 'malformed_signature' },
      });
      await receiver.close();
      expect(seen).toEqual([]);
    });

    it('takes a body of exactly maxBodyBytes on a keep-alive connection, then the next request on it', async () => {
      const first = await leaveApproved();
      const { receiver, seen, wire, url } = await open({ maxBodyBytes: Buffer.byteLength(first.body) });
      wire.write(request('POST', url, first.headers, first.body));
      expect((await wire.next())?.status).toBe(202);
      wire.write(request('POST', url, first.headers, first.body));
      const again = await wire.next();
      expect({ status: again?.status, body: json(again?.body) }).toEqual({
        status: 200,
        body: { received: true, duplicate: true },
      });
      await receiver.close();
      expect(seen).toEqual([first.event.id]);
    });

    for (const framing of ['content-length', 'chunked'] as const) {
      it(`answers a body over maxBodyBytes 413 and closes the keep-alive connection (${framing})`, async () => {
        const { receiver, seen, wire, url } = await open({ maxBodyBytes: 64 * 1024 });
        const delivery = await leaveApproved();
        const oversized = `${delivery.body.slice(0, -1)},"padding":"${'x'.repeat(128 * 1024)}"}`;
        if (framing === 'chunked') {
          wire.write(requestHead('POST', url, { ...delivery.headers, 'transfer-encoding': 'chunked' }));
          wire.write(chunked(oversized, 16 * 1024));
        } else {
          wire.write(request('POST', url, delivery.headers, oversized));
        }
        const answer = await wire.next();
        expect({
          status: answer?.status,
          body: json(answer?.body),
          connection: answer?.headers.connection,
        }).toEqual({
          status: 413,
          body: { error: 'payload_too_large' },
          connection: 'close',
        });
        // The rest of the body is not read as a second request: the connection ends.
        expect(await wire.closed()).toBe(true);
        await receiver.close();
        expect(seen).toEqual([]);
      });
    }
  });
}
