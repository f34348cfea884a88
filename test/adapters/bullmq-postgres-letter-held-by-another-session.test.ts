// A dead letter of BullMQ's Postgres backend whose row another session holds past the call's deadline: the replay or
// discard fails with `queue_unavailable` and does nothing, then or later, once the other session lets go.
import { createPostgresBackend } from 'bullmq';
import type pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { type EventQueue, HandlerFailure, silentLogger } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { queuedEvent } from '../contract/queue-suite.js';
import { connectPostgres, postgresUrl } from '../setup/postgres-helpers.js';
import { uniqueName } from '../setup/redis-helpers.js';

const open: EventQueue[] = [];
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await Promise.all(open.splice(0).map((queue) => queue.close({ timeoutMs: 5000 })));
});

const make = (name: string) =>
  createBullmqQueue({
    backend: createPostgresBackend,
    connection: { connectionString: postgresUrl, migrate: true, max: 4 },
    name,
    attempts: 1,
  });

// A session of its own that locks the letter's row, as an operator's open transaction or a long job would.
async function holdRow(queueName: string, id: string): Promise<{ letGo(): Promise<void> }> {
  const pool: pg.Pool = connectPostgres();
  const client = await pool.connect();
  cleanups.push(async () => {
    await client.query('ROLLBACK').catch(() => {});
    client.release();
    await pool.end();
  });
  await client.query('BEGIN');
  await client.query('SELECT id FROM bullmq.job WHERE queue = $1 AND id = $2 FOR UPDATE', [queueName, id]);
  return { letGo: () => client.query('COMMIT').then(() => {}) };
}

// The letter's state once every transaction that waited for its row before this read is over (a row lock is given
// in the order it was asked for).
async function settledState(queueName: string, id: string): Promise<string | undefined> {
  const pool: pg.Pool = connectPostgres();
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const { rows } = await client.query(
      'SELECT state::text AS state FROM bullmq.job WHERE queue = $1 AND id = $2 FOR UPDATE',
      [queueName, id],
    );
    await client.query('COMMIT');
    return rows[0]?.state;
  } finally {
    client.release();
    await pool.end();
  }
}

describe.skipIf(!postgresUrl)('BullMQ on Postgres: a dead letter held by another session', () => {
  it.each(['replay', 'discard'] as const)(
    'a %s that cannot get the row answers queue_unavailable and never acts later',
    { timeout: 120_000 },
    async (call) => {
      const name = uniqueName(`pg-letter-held-${call}`);
      const app = make(name);
      open.push(app);
      let runs = 0;
      app.start({
        logger: silentLogger,
        process: async () => {
          runs++;
          throw new HandlerFailure([new TypeError('down')], []);
        },
        onDeadLetter: async () => {},
      });
      const job = queuedEvent();
      await app.enqueue(job);
      await expect.poll(async () => (await app.deadLetters()).items.length, { timeout: 30_000 }).toBe(1);
      expect(runs).toBe(1);

      const holder = await holdRow(name, job.event.id);
      const answer = await (call === 'replay' ? app.replay(job.event.id) : app.discard(job.event.id)).then(
        (done) => ({ done }),
        (error: { code?: string }) => ({ code: error.code }),
      );
      expect(answer).toEqual({ code: 'queue_unavailable' });

      await holder.letGo();
      // Still the letter the operator was told was left alone, and never run again.
      expect(await settledState(name, job.event.id)).toBe('failed');
      expect((await app.deadLetters()).items.map((letter) => letter.event.id)).toEqual([job.event.id]);
      expect(runs).toBe(1);
    },
  );
});
