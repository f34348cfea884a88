// close() in inline mode: the whole drain, inline runs and then the queue, is bounded by the one timeout it was given.
import { Queue } from 'bullmq';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createReceiver, type DeadLetter, silentLogger } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createRedisStore } from 'workforce-webhooks/redis';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';

const secret = 'whsec_inline_close_test';

describe.skipIf(!redisUrl)('close() in inline mode, BullMQ queue', () => {
  it('drains within its timeout while an inline run past its 202 still runs', async () => {
    const name = uniqueName('inline-close');
    let runs = 0;
    const receiver = createReceiver({
      secret,
      mode: 'inline',
      ackDeadlineMs: 100,
      store: createRedisStore({ client: connectRedis(), prefix: `${name}:` }),
      queue: createBullmqQueue({ connection: connectRedis(), name }),
      logger: silentLogger,
    }).on('leave.approved', (_event, ctx) => {
      runs++;
      // A long handler that stops when its signal is aborted, as a well-behaved one does.
      return new Promise<void>((_resolve, reject) => {
        ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason));
      });
    });
    const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
    const answer = await receiver.handle({
      method: 'POST',
      headers: delivery.headers,
      body: new TextEncoder().encode(delivery.body),
    });
    expect(answer.status).toBe(202);
    const started = performance.now();
    await receiver.close({ timeoutMs: 2000 });
    const took = performance.now() - started;
    expect(runs).toBeGreaterThanOrEqual(1);
    // Before: the inline runs had the whole timeout, then the queue (which ran the handed-over event) had it again.
    expect(took).toBeLessThan(3000);
  });
});

describe.skipIf(!redisUrl)('close() cuts an inline run past its 202, BullMQ queue', () => {
  it('leaves the accepted event in Redis for another instance, not a dead letter here', async () => {
    const name = uniqueName('inline-close-kept');
    const letters: DeadLetter[] = [];
    let runs = 0;
    const receiver = createReceiver({
      secret,
      mode: 'inline',
      ackDeadlineMs: 50,
      store: createRedisStore({ client: connectRedis(), prefix: `${name}:` }),
      // The hand-over waits a backoff of 5 s: this instance's worker, closing, cannot have taken it meanwhile.
      queue: createBullmqQueue({ connection: connectRedis(), name, attempts: 3, backoff: () => 5000 }),
      logger: silentLogger,
      onDeadLetter: (letter) => void letters.push(letter),
    }).on('leave.approved', (_event, ctx) => {
      runs++;
      return new Promise<void>((_resolve, reject) => {
        ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason));
      });
    });
    const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
    const answer = await receiver.handle({
      method: 'POST',
      headers: delivery.headers,
      body: new TextEncoder().encode(delivery.body),
    });
    expect(answer.status).toBe(202);
    await receiver.close({ timeoutMs: 500 });
    await answer.background;
    const inspect = new Queue(name, { connection: connectRedis(redisUrl, { maxRetriesPerRequest: null }) });
    onTestFinished(() => inspect.close());
    const job = await inspect.getJob(delivery.event.id);
    expect({ runs, letters: letters.length, attemptsMade: job?.data.attemptsMade }).toEqual({
      runs: 1,
      letters: 0,
      attemptsMade: 1,
    });
    expect(await job!.getState()).toBe('delayed');
  });
});
