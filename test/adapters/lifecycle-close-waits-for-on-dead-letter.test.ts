// close() on the BullMQ queue and an event whose last attempt fails as it closes: onDeadLetter (where an app keeps its
// dead letters, or pages someone) has ended when close() resolves, as it has on the memory queue, so an app that
// exits right after close() never cuts it short.
import { describe, expect, it } from 'vitest';
import { createReceiver, type DeadLetter, silentLogger } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createRedisStore } from 'workforce-webhooks/redis';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';

const secret = 'whsec_lifecycle_on_dead_letter_close';

describe.skipIf(!redisUrl)('close() while the last attempt of an event fails, BullMQ queue', () => {
  it('resolves once onDeadLetter has ended', { timeout: 60_000 }, async () => {
    const name = uniqueName('close-dead-letter');
    const kept: string[] = [];
    let started = false;
    let fail: (() => void) | undefined;
    const failed = new Promise<void>((resolve) => {
      fail = resolve;
    });
    const receiver = createReceiver({
      secret,
      logger: silentLogger,
      store: createRedisStore({ client: connectRedis(), prefix: `${name}:store:` }),
      queue: createBullmqQueue({ connection: connectRedis(), name, attempts: 1 }),
      // An app's own record of the letter: a write that takes a few round trips.
      onDeadLetter: async (letter: DeadLetter) => {
        for (let step = 0; step < 5; step++) await new Promise((resolve) => setTimeout(resolve, 50));
        kept.push(letter.event.id);
      },
    }).on('leave.approved', async () => {
      started = true;
      await failed;
      throw new Error('the calendar is down');
    });
    const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
    const answer = await receiver.handle({ method: 'POST', headers: delivery.headers, body: delivery.body });
    expect(answer.status).toBe(202);
    await expect.poll(() => started, { timeout: 30_000 }).toBe(true);

    const closed = receiver.close({ timeoutMs: 10_000 });
    fail!();
    await closed;
    expect(kept).toEqual([delivery.event.id]);
  });
});
