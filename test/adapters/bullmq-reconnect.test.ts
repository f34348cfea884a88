// The BullMQ queue's own connections reconnect after a Redis restart, whatever the retryStrategy of the client they
// were opened from: a client set to give up reconnecting must not leave the receiver answering 503 for ever.
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryStore, createReceiver, type Receiver, silentLogger } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { hasRedisServer, type RedisServer, startRedisServer } from '../setup/redis-server.js';

const secret = 'whsec_bullmq_reconnect';
const encoder = new TextEncoder();
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function deliver(receiver: Receiver, id: string = crypto.randomUUID()) {
  const delivery = await createSignedDelivery({ secret, type: 'leave.approved', id });
  return receiver.handle({ method: 'POST', headers: delivery.headers, body: encoder.encode(delivery.body) });
}

describe.skipIf(!hasRedisServer())('createBullmqQueue after a Redis restart', () => {
  const giveUps = {
    'a client whose retryStrategy stops after a few tries': (times: number) => (times > 2 ? null : 50),
    'a client with retryStrategy null (never reconnects)': null,
  } as const;

  for (const [label, retryStrategy] of Object.entries(giveUps)) {
    it(`accepts and runs events again once Redis is back, from ${label}`, { timeout: 60_000 }, async () => {
      const server: RedisServer = await startRedisServer();
      cleanups.push(() => server.dispose());
      const client = new Redis(server.url, { maxRetriesPerRequest: 1, retryStrategy });
      client.on('error', () => {});
      cleanups.push(async () => client.disconnect());
      const runs: string[] = [];
      const receiver = createReceiver({
        secret,
        store: createMemoryStore(),
        queue: createBullmqQueue({ connection: client, name: 'reconnect' }),
        logger: silentLogger,
      }).on('leave.approved', (event) => void runs.push(event.id));
      cleanups.push(() => receiver.close({ timeoutMs: 2000 }));
      const before = crypto.randomUUID();
      expect((await deliver(receiver, before)).status).toBe(202);
      await expect.poll(() => runs, { timeout: 10_000 }).toEqual([before]);

      // Down long enough for a client that gives up to have given up, then back (empty: no persistence here).
      await server.stop();
      await sleep(1500);
      await server.start();

      // The sender retries a 503; the receiver must take the event once Redis answers, and its worker run it.
      const after = crypto.randomUUID();
      await expect
        .poll(async () => (await deliver(receiver, after)).status, { timeout: 20_000, interval: 250 })
        .toBe(202);
      await expect.poll(() => runs, { timeout: 20_000 }).toEqual([before, after]);
      // The client the queue was given is left as it was: its own settings are the user's.
      expect(client.options.retryStrategy).toBe(retryStrategy);
    });
  }
});
