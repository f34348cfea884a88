// Redis stopped while deliveries arrive: 503 with Retry-After, never a 2xx without a claim; back without a restart.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReceiver, type Receiver } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createNodeHandler } from 'workforce-webhooks/node';
import { createRedisStore } from 'workforce-webhooks/redis';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';
import { hasRedisServer, type RedisServer, startRedisServer } from '../setup/redis-server.js';
import { deliverUntilAccepted } from './cluster.js';

const secret = 'whsec_outage_test';

describe.skipIf(!redisUrl || !hasRedisServer())('Redis stopped while deliveries arrive', () => {
  // A server of this test's own, since it is stopped and started again.
  let redis: RedisServer;
  let receiver: Receiver;
  let server: Server;
  let url: string;
  const processed: string[] = [];

  beforeAll(async () => {
    redis = await startRedisServer();
    receiver = createReceiver({
      secret,
      store: createRedisStore({ client: connectRedis(redis.url) }),
      queue: createBullmqQueue({ connection: connectRedis(redis.url), name: uniqueName('outage') }),
    }).on('leave.approved', (event) => void processed.push(event.id));
    server = createServer(createNodeHandler(receiver));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
  });
  afterAll(async () => {
    server?.close();
    await receiver?.close({ timeoutMs: 2000 });
    await redis?.dispose();
  });

  const signed = (count: number) =>
    Promise.all(
      Array.from({ length: count }, () => createSignedDelivery({ secret, type: 'leave.approved' })),
    );
  const post = async (delivery: Awaited<ReturnType<typeof signed>>[number]) => {
    const response = await fetch(url, { method: 'POST', headers: delivery.headers, body: delivery.body });
    return {
      status: response.status,
      retryAfter: response.headers.get('retry-after'),
      body: await response.text(),
    };
  };

  it('answers 503 with Retry-After while Redis is down, and accepts again once it is back', {
    timeout: 60_000,
  }, async () => {
    const before = await signed(10);
    expect((await Promise.all(before.map(post))).map((a) => a.status)).toEqual(Array(10).fill(202));
    await expect.poll(() => processed.length).toBe(10);

    await redis.stop({ crash: true });
    const during = await signed(20);
    const refused = await Promise.all(during.map(post));
    for (const answer of refused) {
      expect(answer.status).toBe(503);
      expect(answer.retryAfter).toMatch(/^\d+$/);
      expect(JSON.parse(answer.body)).toEqual({ error: 'store_unavailable' });
    }

    // Back (empty: no persistence here), and the same receiver, never restarted, accepts the sender's retries.
    await redis.start();
    const retried = await Promise.all(
      during.map((delivery) => deliverUntilAccepted(delivery, () => url, { pauseMs: 50 })),
    );
    expect(retried.map((answers) => answers.at(-1))).toEqual(Array(20).fill(202));
    await expect.poll(() => processed.length, { timeout: 30_000 }).toBe(30);
    expect(new Set(processed).size).toBe(30);

    // Every 2xx has its claim: the event is marked done in Redis.
    const check = connectRedis(redis.url);
    await expect
      .poll(() => Promise.all(during.map((delivery) => check.get(`wfwh:${delivery.event.id}`))))
      .toEqual(Array(20).fill('done'));
  });
});
