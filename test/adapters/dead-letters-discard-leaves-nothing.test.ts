// A BullMQ dead letter discarded on Redis leaves none of its keys behind, even when BullMQ's own removal of its job
// would be refused, and a redelivery of the event afterwards is run again, not dropped as a duplicate job.
import { afterEach, describe, expect, it } from 'vitest';
import { type EventQueue, HandlerFailure, silentLogger } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { queuedEvent } from '../contract/queue-suite.js';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';

describe.skipIf(!redisUrl)('BullMQ on Redis: discarding a dead letter', () => {
  const open: EventQueue[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((queue) => queue.close({ timeoutMs: 5000 })));
  });

  it('leaves no key of the letter without an expiry, and the event can be queued again', async () => {
    const name = uniqueName('discard-keys');
    const app = createBullmqQueue({ connection: redisUrl, name, attempts: 1 });
    const operator = createBullmqQueue({ connection: redisUrl, name });
    open.push(app, operator);
    const runs: string[] = [];
    app.start({
      logger: silentLogger,
      process: async (job) => {
        runs.push(job.event.id);
        throw new HandlerFailure([new TypeError('down')], []);
      },
      onDeadLetter: async () => {},
    });
    const job = queuedEvent();
    const id = job.event.id;
    await app.enqueue(job);
    await expect.poll(async () => (await operator.deadLetters()).items.length, { timeout: 10_000 }).toBe(1);

    const redis = connectRedis();
    // A lock left on the failed job (a worker's, expiring): BullMQ's removal of the job refuses a locked one, as a
    // connection lost between taking the letter out and removing its job would leave it.
    const [jobKey] = await redis.keys(`*:${name}:${id}`);
    expect(jobKey).toBeDefined();
    await redis.set(`${jobKey}:lock`, 'a-worker', 'PX', 60_000);

    expect(await operator.discard(id)).toBe(true);
    expect((await operator.deadLetters()).items).toEqual([]);
    const left = await redis.keys(`*${id}*`);
    const forever: string[] = [];
    for (const key of left) if ((await redis.pttl(key)) === -1) forever.push(key);
    expect(forever).toEqual([]);

    // Delivered again, the event is a new job: run and dead-lettered again.
    await redis.del(`${jobKey}:lock`);
    await app.enqueue(job);
    await expect.poll(() => runs.length, { timeout: 10_000 }).toBe(2);
    await expect.poll(async () => (await operator.deadLetters()).items.length, { timeout: 10_000 }).toBe(1);
  });
});
