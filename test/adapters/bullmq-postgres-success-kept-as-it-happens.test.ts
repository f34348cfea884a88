// On BullMQ's Postgres backend, a handler's success kept on the job as it happens is the record of the attempt that
// holds the job: an older attempt, whose lock lapsed and whose job another worker took over, writes nothing over it.
import { createPostgresBackend } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryStore, createReceiver, type Receiver, silentLogger } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { connectPostgres, postgresUrl } from '../setup/postgres-helpers.js';
import { uniqueName } from '../setup/redis-helpers.js';

const secret = 'whsec_bullmq_postgres_success_under_lock';
const encoder = new TextEncoder();

const toClose: { close(): Promise<unknown> }[] = [];
afterEach(async () => {
  for (const each of toClose.splice(0).reverse()) await each.close();
});

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

async function deliver(receiver: Receiver, type: string, id: string): Promise<number> {
  const delivery = await createSignedDelivery({ secret, type, id });
  const answer = await receiver.handle({
    method: 'POST',
    headers: delivery.headers,
    body: encoder.encode(delivery.body),
  });
  return answer.status;
}

describe.skipIf(!postgresUrl)('the handlers’ successes of a job on BullMQ’s Postgres backend', () => {
  it('are not overwritten by an older attempt that ends after another worker took its job over', {
    timeout: 120_000,
  }, async () => {
    const name = uniqueName('pg-success-stale-write');
    const pool = connectPostgres();
    const connection = { connectionString: postgresUrl, migrate: true, max: 4 };
    const older = deferred();
    const newer = deferred();
    const runs: string[] = [];
    // The older worker: one slot (so the job, once taken from it, goes to the other worker), and a lock renewed only
    // long after the test (its lapse is made by hand). Both its handlers fail once told to.
    const first = createReceiver({
      secret,
      store: createMemoryStore(),
      queue: createBullmqQueue({
        backend: createPostgresBackend,
        connection,
        name,
        concurrency: 1,
        lockDurationMs: 60_000,
        lockRenewMs: 59_000,
        stalledIntervalMs: 200,
      }),
      logger: silentLogger,
    });
    for (const handler of ['x', 'y'])
      first.on('leave.approved', async () => {
        runs.push(`${handler}:older`);
        await older.promise;
        throw new Error(`${handler} failed`);
      });
    const id = crypto.randomUUID();
    expect(await deliver(first, 'leave.approved', id)).toBe(202);
    await expect.poll(() => runs.length, { timeout: 30_000 }).toBe(2);

    // Its lock lapses (as for a worker stuck past it): the newer worker takes the job over; there `y` succeeds at
    // once and `x` waits, so `y`'s success is on the job.
    const second = createReceiver({
      secret,
      store: createMemoryStore(),
      queue: createBullmqQueue({ backend: createPostgresBackend, connection, name, stalledIntervalMs: 200 }),
      logger: silentLogger,
    });
    toClose.push(second);
    second.on('leave.approved', async () => {
      runs.push('x:newer');
      await newer.promise;
    });
    second.on('leave.approved', async () => {
      runs.push('y:newer');
    });
    await pool.query('UPDATE bullmq.job SET locked_until_ms = 0 WHERE queue = $1 AND id = $2', [name, id]);
    const row = async (): Promise<{ state?: string; completed?: number[] }> => {
      const { rows } = await pool.query<{ state: string; data: { completed?: number[] } }>(
        'SELECT state::text AS state, data FROM bullmq.job WHERE queue = $1 AND id = $2',
        [name, id],
      );
      return { state: rows[0]?.state, completed: rows[0]?.data.completed };
    };
    const completed = async () => (await row()).completed;
    await expect.poll(completed, { timeout: 30_000 }).toEqual([1]);

    // The older attempt ends now, its handlers failed: what it writes must not drop `y`'s success.
    older.resolve();
    await first.close({ timeoutMs: 10_000 });
    expect(await completed()).toEqual([1]);
    newer.resolve();
    await expect.poll(async () => (await row()).state, { timeout: 30_000 }).toBe('completed');
    expect(runs.sort()).toEqual(['x:newer', 'x:older', 'y:newer', 'y:older']);
  });
});
