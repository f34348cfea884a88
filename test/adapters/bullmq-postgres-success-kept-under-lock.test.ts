// On BullMQ's Postgres backend, a running job's data is written only under its attempt's lock token: an older attempt,
// whose lock lapsed and whose job another worker took over, writes nothing over the record of the newer one.
import { createPostgresBackend, type Job, type Queue, type Worker, withBackend } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import type { EventJob, JobData } from '../../adapters/bullmq-job.js';
import { writeDataUnderLock } from '../../adapters/bullmq-postgres-letter.js';
import { queuedEvent } from '../contract/queue-suite.js';
import { connectPostgres, postgresUrl } from '../setup/postgres-helpers.js';
import { uniqueName } from '../setup/redis-helpers.js';

const toClose: { close(): Promise<unknown> }[] = [];
afterEach(async () => {
  for (const each of toClose.splice(0).reverse()) await each.close();
});

describe.skipIf(!postgresUrl)('a running job’s data on BullMQ’s Postgres backend', () => {
  it('is written by the attempt holding its lock, even lapsed, and never by one whose job was taken over', {
    timeout: 120_000,
  }, async () => {
    const classes = withBackend(createPostgresBackend) as unknown as {
      Queue: typeof Queue;
      Worker: typeof Worker;
    };
    const name = uniqueName('pg-data-under-lock');
    const pool = connectPostgres();
    const connection = { connectionString: postgresUrl, migrate: true, max: 4 };
    const queue = new classes.Queue<JobData>(name, { connection } as never);
    toClose.push(queue);
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const held: { job: EventJob; token: string }[] = [];
    const processor = async (job: Job<JobData>, token?: string): Promise<void> => {
      held.push({ job, token: token! });
      await released;
    };
    // The older worker: one slot, a lock that lapses only by hand, and no stalled check of its own to speak of.
    const older = new classes.Worker<JobData>(name, processor, {
      connection,
      concurrency: 1,
      lockDuration: 60_000,
      stalledInterval: 600_000,
    } as never);
    toClose.push({ close: () => older.close(true) });
    const data = queuedEvent();
    const id = data.event.id;
    await queue.add('event', data, { jobId: id });
    await expect.poll(() => held.length, { timeout: 30_000 }).toBe(1);
    const completed = async (): Promise<number[] | undefined> => {
      const { rows } = await pool.query<{ data: { completed?: number[] } }>(
        'SELECT data FROM bullmq.job WHERE queue = $1 AND id = $2',
        [name, id],
      );
      return rows[0]?.data.completed;
    };

    // Its lock lapses: while no other attempt took the job, the attempt's record still lands.
    await pool.query('UPDATE bullmq.job SET locked_until_ms = 0 WHERE queue = $1 AND id = $2', [name, id]);
    expect(await writeDataUnderLock(held[0]!.job, held[0]!.token, { ...data, completed: [0] })).toBe(true);
    expect(await completed()).toEqual([0]);

    // Another worker's stalled check sends the job back and that worker takes it, with a token of its own.
    const newer = new classes.Worker<JobData>(name, processor, { connection, stalledInterval: 200 } as never);
    toClose.push({ close: () => newer.close(true) });
    await expect.poll(() => held.length, { timeout: 30_000 }).toBe(2);
    expect(held[1]!.token).not.toBe(held[0]!.token);
    expect(await writeDataUnderLock(held[1]!.job, held[1]!.token, { ...data, completed: [1] })).toBe(true);
    expect(await completed()).toEqual([1]);

    // The older attempt ends now: what it writes must not drop the newer one's record.
    expect(await writeDataUnderLock(held[0]!.job, held[0]!.token, { ...data, completed: [] })).toBe(false);
    expect(await completed()).toEqual([1]);
    release();
  });
});
