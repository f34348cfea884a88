// A transactional attempt that drops its connection while a statement of it still runs: that statement ends with it.
import { describe, expect, it } from 'vitest';
import { createMemoryQueue, createReceiver, type Handler, type WorkforceEvent } from 'workforce-webhooks';
import { createPostgresStore } from 'workforce-webhooks/postgres';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { connectPostgres, postgresUrl, uniqueTable } from '../setup/postgres-helpers.js';
import { recordingLogger } from '../support/logger.js';

const secret = 'whsec_postgres_abandoned_statement_test';

// A slow report naming its event, so the test finds it (and only it) on the server.
const slow = (id: string) => `SELECT pg_sleep(60), '${id}' AS slow_report`;

// Delivers one event to a receiver whose handler is made by `handler` (given the app table), and waits for the
// event's commit; resolves with the app rows written, the dead letters, and the slow reports still running.
async function deliverOnce(
  handlerTimeoutMs: number,
  handler: (app: string) => Handler<WorkforceEvent<'leave.approved'>>,
) {
  const pool = connectPostgres();
  const admin = connectPostgres();
  const table = uniqueTable('abandoned');
  const app = uniqueTable('abandoned_app');
  const store = createPostgresStore({ pool, table, timeoutMs: 300, cleanupIntervalMs: 0 });
  await store.migrate();
  await pool.query(`CREATE TABLE ${app} (event_id text NOT NULL)`);
  const receiver = createReceiver({
    secret,
    store,
    logger: recordingLogger(),
    queue: createMemoryQueue({ backoff: () => 50, handlerTimeoutMs, attempts: 8 }),
  });
  receiver.on('leave.approved', handler(app));
  const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
  const id = delivery.event.id;
  try {
    const answer = await receiver.handle({
      method: 'POST',
      headers: delivery.headers,
      body: new TextEncoder().encode(delivery.body),
    });
    expect(answer.status).toBe(202);
    const committed = async () =>
      (await admin.query(`SELECT committed FROM ${table} WHERE id = $1`, [id])).rows[0]?.committed;
    await expect.poll(committed, { timeout: 15_000, interval: 100 }).toBe(true);
    const running = async (): Promise<number> =>
      (
        await admin.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'active' AND query = $1`,
          [slow(id)],
        )
      ).rows[0].n;
    await expect.poll(running, { timeout: 5000 }).toBe(0);
    return {
      rows: (await admin.query(`SELECT count(*)::int AS n FROM ${app}`)).rows[0].n,
      deadLetters: (await receiver.deadLetters()).items.length,
    };
  } finally {
    await admin.query('SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query = $1', [slow(id)]);
    await receiver.close();
  }
}

describe.skipIf(!postgresUrl)(
  'a transactional attempt that ends while one of its statements still runs',
  () => {
    it("cancels the statement of an attempt that timed out, so the retry gets the event's turn and commits once", async () => {
      let calls = 0;
      const outcome = await deliverOnce(500, (app) => async (event, ctx) => {
        const db = await ctx.transaction();
        await db.query(`INSERT INTO ${app} VALUES ($1)`, [event.id]);
        // The attempt's time limit passes while Postgres runs the report.
        if (++calls === 1) await db.query(slow(event.id)).catch(() => {});
      });
      expect(outcome).toEqual({ rows: 1, deadLetters: 0 });
    }, 30_000);

    it('cancels the statement a failed handler left running ahead of the rollback, so the retry commits once', async () => {
      let calls = 0;
      const outcome = await deliverOnce(5000, (app) => async (event, ctx) => {
        const db = await ctx.transaction();
        await db.query(`INSERT INTO ${app} VALUES ($1)`, [event.id]);
        if (++calls === 1) {
          // Two statements side by side; the handler fails on the first answer, the report still running.
          void db.query(slow(event.id)).catch(() => {});
          throw new Error('the check beside the report failed');
        }
      });
      expect(outcome).toEqual({ rows: 1, deadLetters: 0 });
    }, 30_000);
  },
);
