import { afterEach, describe, expect, it } from 'vitest';
import { createReceiver } from 'workforce-webhooks';
import { leaveApproved } from '../contract/adapter-dedupe.js';
import { CONTRACT_SECRET } from '../contract/adapter-suite.js';
import { nodeStreamAdapters } from '../support/node-stream-adapters.js';
import { rawExchange as exchange } from '../support/raw-exchange.js';

const adapters = nodeStreamAdapters;

const opened: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((close) => close()));
});

for (const [name, mount] of Object.entries(adapters)) {
  describe(`bodyTimeoutMs on ${name}`, () => {
    const start = async () => {
      const receiver = createReceiver({ secret: CONTRACT_SECRET, bodyTimeoutMs: 300 });
      let handled = 0;
      receiver.on('leave.approved', () => {
        handled++;
      });
      const app = await mount(receiver);
      opened.push(async () => {
        await app.close();
        await receiver.close();
      });
      return { app, handled: () => handled };
    };

    it('answers 408 body_timeout and closes a body declared longer than it is sent', async () => {
      const { app, handled } = await start();
      const delivery = await leaveApproved();
      const result = await exchange(app.url, delivery.headers, delivery.body, (write) => {
        write(delivery.body.slice(0, 20));
        return () => {};
      });
      expect(result.closed).toBe(true);
      expect(result.text).toMatch(/^HTTP\/1\.1 408 /);
      expect(result.text.toLowerCase()).toContain('connection: close');
      expect(result.text).toContain('{"error":"body_timeout"}');
      expect(handled()).toBe(0);
    });

    it('answers 408 body_timeout and closes a body that trickles in', async () => {
      const { app, handled } = await start();
      const delivery = await leaveApproved();
      let sent = 0;
      const result = await exchange(app.url, delivery.headers, delivery.body, (write) => {
        // One byte every 50 ms: the whole body would take tens of seconds, each byte well within any idle timeout.
        const timer = setInterval(() => write(delivery.body[sent++] ?? ' '), 50);
        return () => clearInterval(timer);
      });
      expect(result.closed).toBe(true);
      expect(result.text).toMatch(/^HTTP\/1\.1 408 /);
      expect(result.text).toContain('{"error":"body_timeout"}');
      expect(sent).toBeLessThan(delivery.body.length);
      expect(handled()).toBe(0);
    });

    it('still takes a whole body that comes in time', async () => {
      const { app, handled } = await start();
      const delivery = await leaveApproved();
      const result = await exchange(
        app.url,
        { ...delivery.headers, connection: 'close' },
        delivery.body,
        (write) => {
          write(delivery.body);
          return () => {};
        },
      );
      expect(result.text).toMatch(/^HTTP\/1\.1 202 /);
      await expect.poll(handled).toBe(1);
    });
  });
}

describe('bodyTimeoutMs option', () => {
  it('defaults to 10 000 and refuses what cannot be a deadline', () => {
    expect(createReceiver({ secret: CONTRACT_SECRET }).bodyTimeoutMs).toBe(10_000);
    expect(() => createReceiver({ secret: CONTRACT_SECRET, bodyTimeoutMs: 0 })).toThrow(/bodyTimeoutMs/);
  });
});

// The Pages Router handler reads the body itself: it must use the receiver's bodyTimeoutMs, not the default 10 s.
describe("the Next Pages Router handler's read deadline", () => {
  it("is the receiver's bodyTimeoutMs", async () => {
    const receiver = createReceiver({ secret: CONTRACT_SECRET, bodyTimeoutMs: 300 });
    receiver.on('leave.approved', () => {});
    const app = await adapters['Next Pages Router']!(receiver);
    opened.push(async () => {
      await app.close();
      await receiver.close();
    });
    const delivery = await leaveApproved();
    // Answered long before the 10 s default could pass (the bound is 16 times the configured 300 ms).
    const result = await exchange(
      app.url,
      delivery.headers,
      delivery.body,
      (write) => {
        write(delivery.body.slice(0, 20));
        return () => {};
      },
      5000,
    );
    expect(result.closed).toBe(true);
    expect(result.text).toContain('{"error":"body_timeout"}');
  });
});
