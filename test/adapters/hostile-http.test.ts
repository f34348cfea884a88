// Deliveries with a Content-Type no framework can parse ("", "json", a list) through every adapter on loopback: the
// signature decides, never the media type, and the receiver's own limits still hold (Fastify refuses such a type
// before any parser runs, so its plugin reads the body itself).
import type { Server } from 'node:http';
import { createAdaptorServer } from '@hono/node-server';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createNextRouteHandler } from 'workforce-webhooks/next';
import { expectAnswer, send } from '../contract/adapter-client.js';
import { leaveApproved } from '../contract/adapter-dedupe.js';
import { listen } from '../contract/adapter-listen.js';
import { type Mount, watchedReceiver } from '../contract/adapter-suite.js';
import { nodeStreamAdapters } from '../support/node-stream-adapters.js';
import { rawExchange } from '../support/raw-exchange.js';

const adapters: Record<string, Mount> = {
  ...nodeStreamAdapters,
  'Next App Router': (receiver) =>
    listen(createAdaptorServer({ fetch: createNextRouteHandler(receiver) }) as Server),
};

const ODD_TYPES = ['', 'json', 'application/json, text/plain'];

async function mounted(mount: Mount, options: Parameters<typeof watchedReceiver>[0] = {}) {
  const { receiver, seen } = watchedReceiver(options);
  const app = await mount(receiver);
  onTestFinished(() => app.close());
  return { receiver, seen, url: app.url };
}

for (const [name, mount] of Object.entries(adapters)) {
  describe(`${name} with a Content-Type nothing can parse`, () => {
    for (const type of ODD_TYPES) {
      it(`accepts a validly signed delivery with Content-Type ${JSON.stringify(type)}`, async () => {
        const { receiver, seen, url } = await mounted(mount);
        const delivery = await leaveApproved();
        const headers = { ...delivery.headers, 'content-type': type };
        expectAnswer(await send(url, { method: 'POST', headers, body: delivery.body }), 202, {
          received: true,
        });
        await receiver.close();
        expect(seen).toEqual([delivery.event.id]);
      });
    }

    it('still checks the signature: a forged one is 400 signature_mismatch', async () => {
      const { receiver, seen, url } = await mounted(mount);
      const forged = await leaveApproved({ secret: 'whsec_someone_else' });
      const headers = { ...forged.headers, 'content-type': 'json' };
      expectAnswer(await send(url, { method: 'POST', headers, body: forged.body }), 400, {
        error: 'signature_mismatch',
      });
      await receiver.close();
      expect(seen).toEqual([]);
    });

    it('answers a body over maxBodyBytes 413 payload_too_large', async () => {
      const { url } = await mounted(mount, { maxBodyBytes: 1024 });
      const { headers } = await leaveApproved();
      const body = `{"padding":"${'x'.repeat(4096)}"}`;
      const answer = await send(url, { method: 'POST', headers: { ...headers, 'content-type': '' }, body });
      expectAnswer(answer, 413, { error: 'payload_too_large' });
    });
  });
}

for (const [name, mount] of Object.entries(nodeStreamAdapters)) {
  it(`${name}: a delivery with Content-Type "json" that stalls is answered 408 at bodyTimeoutMs and closed`, async () => {
    const { receiver, seen, url } = await mounted(mount, { bodyTimeoutMs: 300 });
    const delivery = await leaveApproved();
    const head = { ...delivery.headers, 'content-type': 'json' };
    // Declares the whole body, sends 20 bytes of it; answered long before Node's own 300 s request timeout.
    const result = await rawExchange(
      url,
      head,
      delivery.body,
      (write) => {
        write(delivery.body.slice(0, 20));
        return () => {};
      },
      5000,
    );
    expect(result.text).toMatch(/^HTTP\/1\.1 408 /);
    expect(result.text).toContain('{"error":"body_timeout"}');
    expect(result.closed).toBe(true);
    await receiver.close();
    expect(seen).toEqual([]);
  });
}
