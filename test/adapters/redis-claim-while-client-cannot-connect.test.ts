import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { createReceiver, silentLogger } from 'workforce-webhooks';
import { createRedisStore } from 'workforce-webhooks/redis';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { hasRedisServer, startRedisServer } from '../setup/redis-server.js';
import { freePort } from '../support/free-port.js';

const secret = 'whsec_redis_claim_cannot_connect';
const encoder = new TextEncoder();
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

// A redis-server of the test's own that wants a password, stopped after the test.
const passwordRedis = async (): Promise<number> => {
  const server = await startRedisServer(['--requirepass', 'the-right-one']);
  cleanups.push(() => server.dispose());
  return server.port;
};

describe.skipIf(!hasRedisServer())('Redis store: claims while the client cannot connect', () => {
  it.each([
    [
      'nothing listens at the address',
      async () => `redis://127.0.0.1:${await freePort()}`,
      /^workforce-webhooks: the dedupe store is not set up: nothing accepts connections at the Redis address/,
    ],
    [
      'Redis refuses the password',
      async () => `redis://:not-the-password@127.0.0.1:${await passwordRedis()}`,
      /^workforce-webhooks: the dedupe store is not set up: Redis refused the username or password/,
    ],
  ])('answers each delivery 503 with why and the fix when %s', { timeout: 60_000 }, async (_, url, why) => {
    // A client that tries again every 5 s (a retryStrategy that always answers a delay, as the README asks).
    const client = new Redis(await url(), { maxRetriesPerRequest: 1, retryStrategy: () => 5000 });
    let errors = 0;
    client.on('error', () => {
      errors += 1;
    });
    cleanups.push(async () => client.disconnect());
    const answered: string[] = [];
    const receiver = createReceiver({
      secret,
      mode: 'inline',
      store: createRedisStore({ client, logger: silentLogger }),
      logger: { ...silentLogger, error: (_fields, msg) => void answered.push(String(msg)) },
    }).on('leave.approved', () => {});
    cleanups.push(() => receiver.close({ timeoutMs: 2000 }));
    // The first try failed: the client now waits 5 s before its next.
    await expect.poll(() => errors, { timeout: 20_000 }).toBeGreaterThanOrEqual(1);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
      const answer = await receiver.handle({
        method: 'POST',
        headers: delivery.headers,
        body: encoder.encode(delivery.body),
      });
      statuses.push(answer.status);
    }
    expect(statuses).toEqual([503, 503, 503]);
    expect(answered).toHaveLength(3);
    for (const line of answered) expect(line).toMatch(why);
  });
});
