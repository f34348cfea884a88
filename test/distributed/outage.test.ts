// Redis stopped while deliveries arrive: 503 with Retry-After, never a 2xx without a claim; back without a restart.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReceiver } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createRedisStore } from 'workforce-webhooks/redis';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';
import { hasRedisServer, type RedisServer, startRedisServer } from '../setup/redis-server.js';
import { deliverAcrossCrash, type Served, serveReceiver, signedDeliveries } from './outage.js';

const secret = 'whsec_outage_test';

describe.skipIf(!redisUrl || !hasRedisServer())('Redis stopped while deliveries arrive', () => {
  // A server of this test's own, since it is stopped and started again.
  let redis: RedisServer;
  let served: Served;
  const processed: string[] = [];

  beforeAll(async () => {
    redis = await startRedisServer();
    const receiver = createReceiver({
      secret,
      store: createRedisStore({ client: connectRedis(redis.url) }),
      queue: createBullmqQueue({ connection: connectRedis(redis.url), name: uniqueName('outage') }),
    }).on('leave.approved', (event) => void processed.push(event.id));
    served = await serveReceiver(receiver);
  });
  afterAll(async () => {
    await served?.close();
    await redis?.dispose();
  });

  it('answers 503 with Retry-After while Redis is down, and accepts again once it is back', {
    timeout: 60_000,
  }, async () => {
    const before = await signedDeliveries(secret, 10);
    expect((await Promise.all(before.map(served.post))).map((a) => a.status)).toEqual(Array(10).fill(202));
    await expect.poll(() => processed.length).toBe(10);

    // Back empty (no persistence here), and the same receiver, never restarted, accepts the sender's retries.
    const { during } = await deliverAcrossCrash(served, redis, { secret, pauseMs: 50 });
    await expect.poll(() => processed.length, { timeout: 30_000 }).toBe(30);
    expect(new Set(processed).size).toBe(30);

    // Every 2xx has its claim: the event is marked done in Redis.
    const check = connectRedis(redis.url);
    await expect
      .poll(() => Promise.all(during.map((delivery) => check.get(`wfwh:${delivery.event.id}`))))
      .toEqual(Array(20).fill('done'));
  });
});
