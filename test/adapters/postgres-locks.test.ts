// The Postgres store's advisory locks on a real PostgreSQL: per table, so two receivers' stores never wait on each other.
import { describe, expect, it } from 'vitest';
import { createPostgresStore } from 'workforce-webhooks/postgres';
import { connectPostgres, postgresUrl, uniqueTable } from '../setup/postgres-helpers.js';

// How a call ended, for a plain comparison: what it resolved with, or why it rejected.
const settled = <T>(call: Promise<T>): Promise<T | string> =>
  call.catch((error: unknown) => `rejected: ${(error as Error).message}`);

describe.skipIf(!postgresUrl)("the Postgres store's advisory locks", () => {
  it('lets begin() on another table open at once while an attempt on one table holds the same event id', async () => {
    const pool = connectPostgres();
    const store = async (table: string) => {
      const made = createPostgresStore({ pool, table, cleanupIntervalMs: 0 });
      await made.migrate();
      return made;
    };
    const oneTable = uniqueTable('one');
    const [one, two] = [await store(oneTable), await store(uniqueTable('two'))];
    const id = crypto.randomUUID();
    const held = await one.begin(id);
    if (held === 'committed') throw new Error('expected a transaction');
    try {
      // Same event id, another table: no turn to wait for (a shared key made it wait, then fail after timeoutMs).
      const started = performance.now();
      const other = await settled(two.begin(id));
      expect(other).toMatchObject({ client: expect.anything() });
      expect(performance.now() - started).toBeLessThan(1000);
      // The same table named with its schema is the same table: that store waits for the turn, and fails in time.
      const sameTable = createPostgresStore({
        pool,
        table: `public.${oneTable}`,
        timeoutMs: 300,
        cleanupIntervalMs: 0,
      });
      expect(await settled(sameTable.begin(id))).toMatch(/^rejected: workforce-webhooks: another attempt/);
      // Each table keeps its own done mark: both commit.
      if (typeof other === 'string') throw new Error('expected a transaction');
      expect(await other.commit()).toBe(true);
      expect(await held.commit()).toBe(true);
    } finally {
      await held.rollback(false);
    }
  });

  it("commits an event once when an old instance's attempt (its lock key named no table) runs beside a new one's", async () => {
    const pool = connectPostgres();
    const table = uniqueTable('rolling');
    const app = uniqueTable('rolling_app');
    const store = createPostgresStore({ pool, table, cleanupIntervalMs: 0 });
    await store.migrate();
    await pool.query(`CREATE TABLE ${app} (event_id text NOT NULL, writer text NOT NULL)`);
    const id = crypto.randomUUID();
    // The new instance's attempt: its turn taken, its handler's row written, not committed yet.
    const next = await store.begin(id);
    if (next === 'committed') throw new Error('expected a transaction');
    await next.client.query(`INSERT INTO ${app} VALUES ($1, 'new')`, [id]);
    // The old instance's attempt, as 0.1.0 ran it: the lock key without the table, so no turn to wait for.
    const old = await pool.connect();
    try {
      await old.query('BEGIN');
      await old.query(`SELECT pg_advisory_xact_lock(hashtextextended('workforce-webhooks:' || $1, 0))`, [id]);
      expect((await old.query(`SELECT committed FROM ${table} WHERE id = $1`, [id])).rows).toEqual([]);
      await old.query(`INSERT INTO ${app} VALUES ($1, 'old')`, [id]);
      // Its done mark, 0.1.0's statement (the same as today's), written and not yet committed.
      const { rowCount } = await old.query(
        `INSERT INTO ${table} AS e (id, token, expires_at, committed)
         VALUES ($1, NULL, now() + $2 * interval '1 millisecond', true)
         ON CONFLICT (id) DO UPDATE SET committed = true, expires_at = GREATEST(e.expires_at, excluded.expires_at)
         WHERE NOT e.committed RETURNING 1`,
        [id, 60_000],
      );
      expect(rowCount).toBe(1);
      // The new attempt's done mark waits on that row, then finds it committed: its own writes roll back.
      const committing = next.commit();
      await expect
        .poll(async () => {
          const { rows } = await pool.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_stat_activity
             WHERE wait_event_type = 'Lock' AND query LIKE '%' || $1 || '%'`,
            [table],
          );
          return rows[0]!.n;
        })
        .toBe(1);
      await old.query('COMMIT');
      expect(await committing).toBe(false);
    } finally {
      await old.query('ROLLBACK').catch(() => {});
      old.release();
      await next.rollback(false);
    }
    const { rows } = await pool.query(`SELECT writer FROM ${app} WHERE event_id = $1`, [id]);
    expect(rows).toEqual([{ writer: 'old' }]);
    expect(await store.begin(id)).toBe('committed');
  });

  it('lets migrate() of another table run while a migration of one table holds its lock', async () => {
    const pool = connectPostgres();
    const admin = connectPostgres();
    const table = uniqueTable('migrating');
    const first = createPostgresStore({ pool, table, timeoutMs: 10_000, cleanupIntervalMs: 0 });
    await first.migrate();
    // Its index dropped (a table made by hand), the next migration of it has one to make: it takes its migrate lock,
    // then waits on the table that another session holds.
    await pool.query(`DROP INDEX "${table}_expires_at"`);
    const holder = await admin.connect();
    await holder.query('BEGIN');
    await holder.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
    try {
      const migrating = settled(first.migrate());
      await expect
        .poll(async () => {
          const { rows } = await admin.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_stat_activity
             WHERE wait_event_type = 'Lock' AND wait_event = 'relation' AND query LIKE '%' || $1 || '%'`,
            [table],
          );
          return rows[0]!.n;
        })
        .toBe(1);
      // A store on another table migrates meanwhile (a shared lock made it wait, then fail after timeoutMs).
      const second = createPostgresStore({
        pool,
        table: uniqueTable('beside'),
        timeoutMs: 1000,
        cleanupIntervalMs: 0,
      });
      const started = performance.now();
      expect(await settled(second.migrate())).toBeUndefined();
      expect(performance.now() - started).toBeLessThan(1000);
      expect((await second.claim(crypto.randomUUID(), 30_000)).status).toBe('claimed');
      await holder.query('ROLLBACK');
      expect(await migrating).toBeUndefined();
    } finally {
      await holder.query('ROLLBACK').catch(() => {});
      holder.release();
    }
  });
});
