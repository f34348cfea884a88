// Edges no other test pins, on every adapter over a raw socket: the connection after a refused delivery (reused, or
// closed after an answer that said `connection: close`, never left hanging), a chunked body that stalls (the
// existing 408 tests declare a Content-Length), and a client that disconnects mid-body (the read ends with the
// socket, not at bodyTimeoutMs).
import { describe, expect, it, onTestFinished } from 'vitest';
import { createReceiver, type Receiver, type ReceiverOptions, silentLogger } from 'workforce-webhooks';
import { leaveApproved } from '../contract/adapter-dedupe.js';
import { CONTRACT_SECRET, type Mount, watchedReceiver } from '../contract/adapter-suite.js';
import { everyAdapter } from '../support/node-stream-adapters.js';
import { chunked, openWire, request, requestHead, type Wire } from '../support/wire.js';

/** A receiver recording handled ids, mounted; both closed after the test. */
async function mountReceiver(mount: Mount, options: Partial<ReceiverOptions> = {}) {
  const { receiver, seen } = watchedReceiver({ logger: silentLogger, ...options });
  const app = await mount(receiver);
  onTestFinished(() => app.close());
  return { url: app.url, seen };
}

/** Sends a valid delivery on the same connection: 'answered 202', 'closed as announced', or what went wrong. */
async function reuse(wire: Wire, url: string, announcedClose: boolean): Promise<string> {
  const next = await leaveApproved();
  wire.write(request('POST', url, next.headers, next.body));
  const answer = await wire.next({ waitMs: 4000 });
  if (answer !== undefined) return `answered ${answer.status}`;
  if (!(await wire.closed(1000))) return 'left hanging';
  return announcedClose ? 'closed as announced' : 'closed without saying so';
}

for (const [name, mount] of Object.entries(everyAdapter)) {
  describe(`${name}: the connection after the answer`, () => {
    it('after a 400 (forged), the same connection takes the next delivery', async () => {
      const { url } = await mountReceiver(mount);
      const wire = await openWire(url);
      const forged = await leaveApproved({ secret: 'whsec_someone_else' });
      wire.write(request('POST', url, forged.headers, forged.body));
      const first = await wire.next();
      expect(first?.body).toBe('{"error":"signature_mismatch"}');
      expect(await reuse(wire, url, false)).toBe('answered 202');
    });

    it.each(['declared', 'chunked'])(
      'after a 413 (%s body sent in full), the connection is reused or closed as announced',
      async (framing) => {
        const { url } = await mountReceiver(mount, { maxBodyBytes: 1024 });
        const wire = await openWire(url);
        const { headers } = await leaveApproved();
        const body = `{"padding":"${'x'.repeat(4000)}"}`;
        if (framing === 'declared') wire.write(request('POST', url, headers, body));
        else {
          wire.write(requestHead('POST', url, { ...headers, 'transfer-encoding': 'chunked' }));
          wire.write(chunked(body, 512));
        }
        const first = await wire.next();
        expect(first?.body).toBe('{"error":"payload_too_large"}');
        const announced = first?.headers.connection?.toLowerCase() === 'close';
        expect(['answered 202', 'closed as announced']).toContain(await reuse(wire, url, announced));
      },
    );

    it('a chunked body that stalls is answered 408 body_timeout and the connection closed', async () => {
      const { url, seen } = await mountReceiver(mount, { bodyTimeoutMs: 300 });
      const wire = await openWire(url);
      const delivery = await leaveApproved();
      wire.write(requestHead('POST', url, { ...delivery.headers, 'transfer-encoding': 'chunked' }));
      wire.write(`14\r\n${delivery.body.slice(0, 20)}\r\n`);
      const answer = await wire.next({ waitMs: 5000 });
      expect({ status: answer?.status, body: answer?.body }).toEqual({
        status: 408,
        body: '{"error":"body_timeout"}',
      });
      expect(await wire.closed(3000)).toBe(true);
      expect(seen).toEqual([]);
    });
  });

  describe(`${name}: a client gone mid-body`, () => {
    it.each(['declared', 'chunked'])(
      'the read ends with the socket (%s), long before the default bodyTimeoutMs',
      async (framing) => {
        // Default bodyTimeoutMs (10 s): an answer within 4 s can only come from the socket's end.
        const receiver = createReceiver({ secret: CONTRACT_SECRET, logger: silentLogger });
        let settled = 0;
        const counting = new Proxy(receiver, {
          get(target, prop) {
            const value = Reflect.get(target, prop) as unknown;
            if (prop !== 'handle' && prop !== 'fetch')
              return typeof value === 'function' ? value.bind(target) : value;
            return (...args: unknown[]) => {
              const result = (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
              void result.finally(() => settled++);
              return result;
            };
          },
        }) as Receiver;
        const app = await mount(counting);
        onTestFinished(async () => {
          await receiver.close({ timeoutMs: 200 });
          await app.close();
        });
        const wire = await openWire(app.url);
        const delivery = await leaveApproved();
        if (framing === 'declared')
          wire.write(request('POST', app.url, delivery.headers, delivery.body).subarray(0, 400));
        else {
          wire.write(requestHead('POST', app.url, { ...delivery.headers, 'transfer-encoding': 'chunked' }));
          wire.write(`14\r\n${delivery.body.slice(0, 20)}\r\n`);
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
        wire.destroy();
        const started = Date.now();
        while (settled === 0 && Date.now() - started < 4000)
          await new Promise((resolve) => setTimeout(resolve, 20));
        expect(settled).toBe(1);
      },
    );
  });
}
