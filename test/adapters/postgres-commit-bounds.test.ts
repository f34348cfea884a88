// The event transaction's commit on the Postgres store: its waits end on the server when the client gives up.
import { describe, expect, it } from 'vitest';
import { createPostgresStore } from 'workforce-webhooks/postgres';
import { connectPostgres, postgresUrl, uniqueTable } from '../setup/postgres-helpers.js';

// How a call ended, for a plain comparison: what it resolved with, or that it rejected.
const settle = (promise: Promise<unknown>): Promise<string> =>
  promise.then(
    (value) => (typeof value === 'object' && value !== null ? 'transaction' : String(value)),
    () => 'failed',
  );

// Statements on `table` waiting on the server for a lock, whose text starts with `start`.
async function waiting(
  admin: ReturnType<typeof connectPostgres>,
  table: string,
  start: string,
): Promise<number> {
  const { rows } = await admin.query(
    `SELECT count(*)::int AS n FROM pg_stat_activity
     WHERE wait_event_type = 'Lock' AND query LIKE '%' || $1 || '%' AND ltrim(query) LIKE $2 || '%'`,
    [table, start],
  );
  return rows[0].n;
}

describe.skipIf(!postgresUrl)(
  'the done mark of an event transaction beside a row another transaction holds',
  () => {
    it("gives up on the server too a done mark that waited past its deadline, and the event's next attempt gets its turn", async () => {
      const pool = connectPostgres(postgresUrl, { max: 6 });
      const admin = connectPostgres();
      const table = uniqueTable('commit_wait');
      const app = uniqueTable('commit_wait_app');
      const store = createPostgresStore({ pool, table, timeoutMs: 300, cleanupIntervalMs: 0 });
      await store.migrate();
      await admin.query(`CREATE TABLE ${app} (event_id text PRIMARY KEY)`);
      const id = crypto.randomUUID();
      expect((await store.claim(id, 30_000)).status).toBe('claimed');
      const tx = await store.begin(id);
      if (tx === 'committed') throw new Error('a fresh event was found committed');
      // The handler's write: its row stays locked for as long as the attempt's transaction lives on the server.
      await tx.client.query(`INSERT INTO ${app} VALUES ($1)`, [id]);
      // Another transaction holds the event's row and stops answering (an app transaction on the row, an attempt of
      // an older instance frozen between its done mark and its COMMIT).
      const holder = await admin.connect();
      try {
        await holder.query('BEGIN');
        await holder.query(`UPDATE ${table} SET expires_at = expires_at WHERE id = $1`, [id]);
        expect(await settle(tx.commit())).toBe('failed');
        // Nothing of the given-up attempt is left waiting on the server, holding the event's turn and the handler's row.
        await expect.poll(() => waiting(admin, table, 'INSERT INTO'), { timeout: 5000 }).toBe(0);
        const next = await store.begin(id);
        expect(await settle(Promise.resolve(next))).toBe('transaction');
        if (next !== 'committed') {
          await next.client.query(`INSERT INTO ${app} VALUES ($1)`, [id]);
          await next.rollback(false);
        }
      } finally {
        await holder.query('ROLLBACK').catch(() => {});
        holder.release();
      }
    });
  },
);
