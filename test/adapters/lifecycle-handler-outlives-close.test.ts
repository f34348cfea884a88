// A handler that ignores ctx.signal and outlives close()'s timeoutMs on the BullMQ queue: its event stays stored and
// runs on the next instance; the late end of the cut handler marks nothing done, and a handler that had succeeded is
// not run again.
import { Queue } from 'bullmq';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createReceiver, type DeadLetter, type Receiver, silentLogger } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createRedisStore } from 'workforce-webhooks/redis';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';

const secret = 'whsec_lifecycle_handler_outlives_close';

describe.skipIf(!redisUrl)('a handler that ignores its signal past close(), BullMQ queue', () => {
  it('leaves the event to the next instance, which runs only the handler that had not finished', {
    timeout: 120_000,
  }, async () => {
    const name = uniqueName('outlives-close');
    const runs = { quick: 0, slow: 0, slowEnded: 0 };
    const letters: DeadLetter[] = [];
    let letGo: (() => void) | undefined;
    const held = new Promise<void>((resolve) => {
      letGo = resolve;
    });
    const make = (hold: boolean): Receiver =>
      createReceiver({
        secret,
        logger: silentLogger,
        store: createRedisStore({ client: connectRedis(), prefix: `${name}:store:` }),
        queue: createBullmqQueue({ connection: connectRedis(), name, backoff: () => 0 }),
        onDeadLetter: (letter) => void letters.push(letter),
      })
        .on('leave.approved', () => {
          runs.quick++;
        })
        .on('leave.approved', async () => {
          runs.slow++;
          // Never looks at ctx.signal: the first instance's run goes on past the close.
          if (hold) await held;
          runs.slowEnded++;
        });
    const first = make(true);
    const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
    const answer = await first.handle({ method: 'POST', headers: delivery.headers, body: delivery.body });
    expect(answer.status).toBe(202);
    await expect.poll(() => runs.slow, { timeout: 30_000 }).toBe(1);
    await first.close({ timeoutMs: 1000 });
    // The cut handler ends now, after the close: nothing of it is recorded.
    letGo!();

    const inspect = new Queue(name, { connection: connectRedis(redisUrl, { maxRetriesPerRequest: null }) });
    onTestFinished(() => inspect.close());
    const job = await inspect.getJob(delivery.event.id);
    expect(await job?.getState()).not.toBe('completed');

    const second = make(false);
    onTestFinished(() => second.close({ timeoutMs: 5000 }));
    await expect
      .poll(async () => (await inspect.getJob(delivery.event.id))?.getState(), { timeout: 60_000 })
      .toBe('completed');
    // The quick handler succeeded on the first instance and is skipped; the slow one runs again on the second.
    expect({ ...runs, letters: letters.length }).toEqual({ quick: 1, slow: 2, slowEnded: 2, letters: 0 });
  });
});
