// Ordering on a Redis that goes silent (SIGSTOP) as an ordered event's handlers end: the watermark write is tried
// again until `ordering.maxWaitMs` has passed, counted on the clock, each try's own wait for the store included, so
// the event's key is given up when the option says, not half as late again.
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryQueue, createReceiver } from 'workforce-webhooks';
import { createRedisStore } from 'workforce-webhooks/redis';
import { createSignedDelivery, sampleEventData } from 'workforce-webhooks/testing';
import { connectRedis, redisUrl } from '../setup/redis-helpers.js';
import { hasRedisServer, startRedisServer } from '../setup/redis-server.js';
import { recordingLogger } from '../support/logger.js';
import { until } from '../support/ordering-scenario.js';

const secret = 'whsec_ordering_silent_redis_gives_up';
const encoder = new TextEncoder();
const GAVE_UP = 'gave up writing an ordering watermark';
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe.skipIf(!redisUrl || !hasRedisServer())('a watermark write on a silent Redis', () => {
  it('is given up once ordering.maxWaitMs has passed, each try’s wait for the store counted', {
    timeout: 90_000,
  }, async () => {
    const server = await startRedisServer();
    cleanups.push(async () => {
      server.resume();
      await server.dispose();
    });
    const logger = recordingLogger();
    const maxWaitMs = 4000;
    const storeTimeoutMs = 2000;
    const receiver = createReceiver({
      secret,
      store: createRedisStore({ client: connectRedis(server.url) }),
      logger,
      storeTimeoutMs,
      queue: createMemoryQueue({ attempts: 1, handlerTimeoutMs: 60_000 }),
      ordering: { maxWaitMs },
    });
    cleanups.push(() => receiver.close({ timeoutMs: 3000 }));
    const delivery = await createSignedDelivery({
      secret,
      type: 'leave.approved',
      data: { ...sampleEventData('leave.approved'), leaveRequestId: crypto.randomUUID() },
    });
    let pausedAt: number | undefined;
    receiver.on('leave.approved', () => {
      // Redis goes silent as the handlers end: every watermark write from here on gets no answer.
      server.pause();
      pausedAt = performance.now();
    });
    const answer = await receiver.handle({
      method: 'POST',
      headers: delivery.headers,
      body: encoder.encode(delivery.body),
    });
    expect(answer.status).toBe(202);
    await until(() => logger.lines.some((line) => line.msg?.includes(GAVE_UP)), 'the give-up', 60_000);
    const gaveUpAfter = performance.now() - pausedAt!;
    server.resume();
    // The first write waits its deadline, then the retries take maxWaitMs, the last try's own deadline at most past
    // it: about 8 s. Counting only the pauses between tries gave up after about 20 s here. A wide bound between.
    expect(gaveUpAfter).toBeGreaterThan(maxWaitMs);
    expect(gaveUpAfter).toBeLessThan(storeTimeoutMs + maxWaitMs + storeTimeoutMs + 5000);
    expect(logger.lines.filter((line) => line.msg?.includes(GAVE_UP))).toHaveLength(1);
  });
});
