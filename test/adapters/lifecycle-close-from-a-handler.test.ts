// close() called from inside a handler or onDeadLetter (an app's shutdown-on-error path): the drain cannot wait for
// the call that awaits it, so it ends at its timeoutMs, never hangs, and the event whose call awaited it is not lost.
import { Queue } from 'bullmq';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  createMemoryQueue,
  createReceiver,
  type DeadLetter,
  type EventQueue,
  silentLogger,
} from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createRedisStore } from 'workforce-webhooks/redis';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';

const secret = 'whsec_lifecycle_close_from_handler';

describe.skipIf(!redisUrl)('close() awaited inside a handler', () => {
  it.each([
    { queue: 'memory', mode: 'queue' },
    { queue: 'bullmq', mode: 'queue' },
    { queue: 'memory', mode: 'inline' },
  ] as const)(
    '$queue queue, $mode mode: ends within its timeoutMs',
    { timeout: 60_000 },
    async ({ queue, mode }) => {
      const name = uniqueName('close-in-handler');
      const letters: DeadLetter[] = [];
      let closed: Promise<void> | undefined;
      let after = false;
      const receiver = createReceiver({
        secret,
        mode,
        logger: silentLogger,
        store: createRedisStore({ client: connectRedis(), prefix: `${name}:store:` }),
        queue: (queue === 'bullmq'
          ? createBullmqQueue({ connection: connectRedis(), name, backoff: () => 5000 })
          : createMemoryQueue()) as EventQueue,
        onDeadLetter: (letter) => void letters.push(letter),
      }).on('leave.approved', async () => {
        closed = receiver.close({ timeoutMs: 2000 });
        await closed;
        after = true;
      });
      const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
      const answering = receiver.handle({ method: 'POST', headers: delivery.headers, body: delivery.body });
      await expect.poll(() => closed !== undefined, { timeout: 30_000 }).toBe(true);
      // The handler that called it is cut at the end of the wait (its own await holds it), and the drain ends.
      await closed;
      const answer = await answering;
      expect(after).toBe(true);
      if (mode === 'inline') {
        // Its run started before close() began: answered as it ended (processed).
        expect(answer.status).toBe(200);
      } else if (queue === 'memory') {
        // Cut by close() while it ran: a dead letter of that attempt, as every running attempt close() cuts.
        expect(letters.map((letter) => letter.event.id)).toEqual([delivery.event.id]);
      } else {
        // Cut by close() while it ran: the job stays in Redis for the next instance.
        const inspect = new Queue(name, {
          connection: connectRedis(redisUrl, { maxRetriesPerRequest: null }),
        });
        onTestFinished(() => inspect.close());
        expect(await (await inspect.getJob(delivery.event.id))?.getState()).toBe('delayed');
      }
    },
  );

  it('bullmq queue, from onDeadLetter: ends within its timeoutMs, the letter kept for the next instance', {
    timeout: 60_000,
  }, async () => {
    const name = uniqueName('close-in-dead-letter');
    let closed: Promise<void> | undefined;
    let after = false;
    const make = (onDeadLetter: (letter: DeadLetter) => Promise<void> | void) =>
      createReceiver({
        secret,
        logger: silentLogger,
        store: createRedisStore({ client: connectRedis(), prefix: `${name}:store:` }),
        queue: createBullmqQueue({ connection: connectRedis(), name, attempts: 1 }),
        onDeadLetter,
      }).on('leave.approved', () => {
        throw new Error('the calendar is down');
      });
    const receiver = make(async () => {
      closed = receiver.close({ timeoutMs: 2000 });
      await closed;
      after = true;
    });
    const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
    const answer = await receiver.handle({ method: 'POST', headers: delivery.headers, body: delivery.body });
    expect(answer.status).toBe(202);
    await expect.poll(() => closed !== undefined, { timeout: 30_000 }).toBe(true);
    await closed;
    await expect.poll(() => after).toBe(true);
    const next = make(() => {});
    onTestFinished(() => next.close({ timeoutMs: 5000 }));
    expect((await next.deadLetters()).items.map((letter) => letter.event.id)).toEqual([delivery.event.id]);
  });
});
