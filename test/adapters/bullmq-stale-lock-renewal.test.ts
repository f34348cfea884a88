// A lock renewal that failed for an older attempt's token (sent just before the job was handed to this worker again)
// stops nothing: only the attempt that holds the token whose renewal failed is aborted.
import { Queue, Worker } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import { type AttemptContext, silentLogger } from 'workforce-webhooks';
import { pacedWorker } from '../../adapters/bullmq-paced-worker.js';
import { createJobRunner } from '../../adapters/bullmq-processor.js';
import { SuccessRecords } from '../../adapters/bullmq-success.js';
import { queuedEvent } from '../contract/queue-suite.js';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';

const toClose: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const each of toClose.splice(0).reverse()) await each.close();
});

describe.skipIf(!redisUrl)('the BullMQ worker told of a failed lock renewal', () => {
  it('aborts the running attempt only for the token it holds, never for an older one of the same job', {
    timeout: 60_000,
  }, async () => {
    const name = uniqueName('stale-renewal');
    const connection = connectRedis(redisUrl, { maxRetriesPerRequest: null });
    const contexts: AttemptContext[] = [];
    const retries: number[] = [];
    const runner = createJobRunner({
      hooks: () => ({
        logger: silentLogger,
        onDeadLetter: async () => {},
        onRetry: (_job, attempt) => {
          retries.push(attempt);
        },
        // Runs until its signal is aborted.
        process: (_job, ctx) => {
          contexts.push(ctx);
          return new Promise<void>((_resolve, reject) =>
            ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)),
          );
        },
      }),
      successes: new SuccessRecords({
        client: () => connection,
        key: (id) => `bull:${name}:${id}:succeeded`,
        keepMs: 60_000,
        lockMs: 30_000,
      }),
      name,
      handlerTimeoutMs: 60_000,
    });
    const queue = new Queue(name, { connection });
    toClose.push(queue);
    const worker = new (pacedWorker(Worker, runner))(name, runner.processor, {
      connection,
      // No renewal of its own during the test: the renewals below are the lock manager's calls, made by hand.
      lockDuration: 30_000,
      lockRenewTime: 29_000,
    });
    toClose.push(worker);
    const job = queuedEvent();
    const id = job.event.id;
    await queue.add('event', job, { jobId: id, attempts: 2 });
    await expect.poll(() => contexts.length, { timeout: 20_000 }).toBe(1);
    const lock = `bull:${name}:${id}:lock`;
    const token = (await connection.get(lock))!;
    expect(token).toBeTruthy();

    // A renewal sent with an earlier attempt's token fails in Redis (the lock is this attempt's now): not this one's.
    expect(await worker.extendJobLocks([id], [`${token}-earlier`], 30_000)).toEqual([id]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(contexts[0]!.signal.aborted).toBe(false);
    expect(retries).toEqual([]);

    // This attempt's own lock gone: its renewal fails, and it stops, counted as a retry.
    await connection.del(lock);
    expect(await worker.extendJobLocks([id], [token], 30_000)).toEqual([id]);
    await expect.poll(() => contexts[0]!.signal.aborted).toBe(true);
    expect(String((contexts[0]!.signal.reason as Error).message)).toMatch(/lock was lost/);
    await expect.poll(() => retries).toEqual([1]);
  });
});
