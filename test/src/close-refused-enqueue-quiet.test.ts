// A delivery whose claim lands after close() closed the queue is answered 503 shutting_down, as the status table says:
// an expected part of every shutdown, not an error of the queue, so the log stays quiet at error level.
import { describe, expect, it } from 'vitest';
import { createReceiver } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createRedisStore } from 'workforce-webhooks/redis';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';
import { recordingLogger } from '../support/logger.js';

const secret = 'whsec_close_refused_enqueue';

describe.skipIf(!redisUrl)('close() with claims in flight on Redis and BullMQ', () => {
  it('answers them 503 shutting_down and logs no error for the queue it closed', async () => {
    const logger = recordingLogger();
    const name = uniqueName('close-quiet');
    const receiver = createReceiver({
      secret,
      logger,
      store: createRedisStore({ client: connectRedis(), prefix: `${name}:` }),
      queue: createBullmqQueue({ connection: connectRedis(), name }),
    });
    receiver.on('leave.approved', () => {});
    const deliveries = await Promise.all(
      Array.from({ length: 5 }, () => createSignedDelivery({ secret, type: 'leave.approved' })),
    );
    // Each has passed its verify and waits for its claim when close() begins.
    const answers = deliveries.map((d) =>
      receiver.handle({ method: 'POST', headers: d.headers, body: new TextEncoder().encode(d.body) }),
    );
    await receiver.close({ timeoutMs: 0 });
    const statuses = (await Promise.all(answers)).map((a) => [a.status, JSON.parse(a.body).error]);
    expect(statuses).toEqual(Array.from({ length: 5 }, () => [503, 'shutting_down']));
    expect(logger.lines.filter((line) => line.level === 'error')).toEqual([]);
  });
});

describe('close(null) from JavaScript', () => {
  it('is close(): a promise that resolves, not a synchronous TypeError', async () => {
    const receiver = createReceiver({ secret, logger: recordingLogger() });
    await expect((receiver.close as (options: unknown) => Promise<void>)(null)).resolves.toBeUndefined();
  });
});
