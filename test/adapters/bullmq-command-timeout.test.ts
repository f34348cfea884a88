// The BullMQ queue opened from a client with a `commandTimeout` (as the store's client may be, per the README): its
// worker still waits for jobs with blocking commands longer than that, and runs every accepted event.
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { createReceiver, type Logger, type Receiver } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createRedisStore } from 'workforce-webhooks/redis';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { redisUrl, uniqueName } from '../setup/redis-helpers.js';

const secret = 'whsec_bullmq_command_timeout';
const encoder = new TextEncoder();
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function deliver(receiver: Receiver, id: string = crypto.randomUUID()) {
  const delivery = await createSignedDelivery({ secret, type: 'leave.approved', id });
  return receiver.handle({ method: 'POST', headers: delivery.headers, body: encoder.encode(delivery.body) });
}

describe.skipIf(!redisUrl)('createBullmqQueue from a client with a commandTimeout', () => {
  it('runs every event accepted while the worker was idle, with no timeout warnings', {
    timeout: 60_000,
  }, async () => {
    // One client for both, the store's deadline on it: a commandTimeout, as the store's option docs allow.
    const client = new Redis(redisUrl, { commandTimeout: 500 });
    client.on('error', () => {});
    cleanups.push(async () => client.disconnect());
    const warnings: string[] = [];
    const logger: Logger = {
      debug() {},
      info() {},
      warn: (fields: object) => void warnings.push(String((fields as { err?: Error }).err?.message)),
      error: (fields: object) => void warnings.push(String((fields as { err?: Error }).err?.message)),
    };
    const name = uniqueName('command-timeout');
    const runs: string[] = [];
    const receiver = createReceiver({
      secret,
      logger,
      store: createRedisStore({ client, prefix: `${name}:` }),
      queue: createBullmqQueue({ connection: client, name }),
    }).on('leave.approved', (event) => void runs.push(event.id));
    cleanups.push(() => receiver.close({ timeoutMs: 2000 }));

    const accepted: string[] = [];
    for (let i = 0; i < 3; i++) {
      // Idle longer than the commandTimeout between events: the worker is blocked waiting for a job.
      await sleep(1500);
      const id = crypto.randomUUID();
      expect((await deliver(receiver, id)).status).toBe(202);
      accepted.push(id);
      // Each runs promptly (a wide bound: the worker is idle and Redis answers).
      await expect.poll(() => runs.includes(id), { timeout: 5000 }).toBe(true);
    }
    expect(runs).toEqual(accepted);
    expect(warnings.filter((message) => /timed out/i.test(message))).toEqual([]);
  });
});
