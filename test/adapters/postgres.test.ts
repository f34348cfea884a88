// The Postgres store on a real PostgreSQL: the store contract, one statement per claim, migration, cleanup, deadlines.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { ConfigurationError, createReceiver } from 'workforce-webhooks';
import { createPostgresStore } from 'workforce-webhooks/postgres';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { runStoreContract } from '../contract/store-suite.js';
import { connectPostgres, postgresUrl, uniqueTable } from '../setup/postgres-helpers.js';
import { recordingLogger } from '../support/logger.js';

const secret = 'whsec_postgres_store_test';
const DAY = 24 * 60 * 60 * 1000;

const migrated = async (options: { readonly table?: string } = {}) => {
  const pool = connectPostgres();
  const table = options.table ?? uniqueTable('store');
  const store = createPostgresStore({ pool, table, cleanupIntervalMs: 0 });
  await store.migrate();
  return { pool, table, store };
};

describe.skipIf(!postgresUrl)('createPostgresStore', () => {
  runStoreContract('postgres', async () => ({
    store: (await migrated()).store,
    // Postgres keeps its own time: let it pass for real, with a margin.
    elapse: (ms) => sleep(ms + 20),
  }));

  it('keeps a claim and a done id in one row, and a duplicate of a done id writes nothing', async () => {
    const { pool, table, store } = await migrated();
    const id = crypto.randomUUID();
    const claim = await store.claim(id, 30_000);
    if (claim.status !== 'claimed') throw new Error('expected a claim');
    const row = async () =>
      (
        await pool.query(
          `SELECT token, committed, expires_at > now() + interval '23 hours' AS kept, xmin::text, ctid::text FROM ${table}`,
        )
      ).rows;
    expect((await row())[0]).toMatchObject({ token: claim.token, committed: false, kept: false });
    expect(await store.complete(id, claim.token, DAY)).toBe(true);
    const done = await row();
    expect(done).toEqual([expect.objectContaining({ token: null, committed: false, kept: true })]);
    // The sender's retries of a done event: the lease check fails, and the row version stays the same.
    expect(await store.claim(id, 30_000)).toEqual({ status: 'done' });
    expect(await store.claim(id, 30_000)).toEqual({ status: 'done' });
    expect(await row()).toEqual(done);
  });

  it('treats a row its handler transaction committed as done, even when the done mark never replaced its token', async () => {
    // Postgres went down right after the enqueue: the accept-time done mark (token NULL) never landed, and the
    // queue ran the event, whose transaction committed. The row keeps the claim's token.
    const { pool, table, store } = await migrated();
    const id = crypto.randomUUID();
    const claim = await store.claim(id, 200);
    if (claim.status !== 'claimed') throw new Error('expected a claim');
    const tx = await store.begin(id);
    if (tx === 'committed') throw new Error('expected a transaction');
    expect(await tx.commit()).toBe(true);
    const row = async () =>
      (await pool.query(`SELECT token, committed FROM ${table} WHERE id = $1`, [id])).rows[0];
    expect(await row()).toEqual({ token: claim.token, committed: true });
    await sleep(300); // past the claim's lease: the commit kept the row for the dedupe window
    // Done for every later delivery, and never given up by the claim's owner.
    expect(await store.claim(id, 30_000)).toEqual({ status: 'done' });
    expect(await store.release(id, claim.token)).toBe(false);
    expect(await store.claim(id, 30_000)).toEqual({ status: 'done' });
    expect(await row()).toEqual({ token: claim.token, committed: true });
  });

  it('renews for its owner a claim whose handler transaction committed, leaving the dedupe window as the commit set it', async () => {
    // Inline, the lease's renewal can land just after the commit: it is no lost lease.
    const { pool, table, store } = await migrated();
    const id = crypto.randomUUID();
    const claim = await store.claim(id, 30_000);
    if (claim.status !== 'claimed') throw new Error('expected a claim');
    const tx = await store.begin(id);
    if (tx === 'committed') throw new Error('expected a transaction');
    expect(await tx.commit()).toBe(true);
    const expires = async () =>
      (await pool.query(`SELECT expires_at::text AS at FROM ${table} WHERE id = $1`, [id])).rows[0].at;
    const window = await expires();
    expect(await store.renew(id, claim.token, 100)).toBe(true);
    expect(await expires()).toBe(window);
    expect(await store.renew(id, 'another token', 100)).toBe(false);
    expect(await store.complete(id, claim.token, DAY)).toBe(true);
    expect(await store.renew(id, claim.token, 100)).toBe(false);
  });

  it('migrates idempotently, from several instances at once, into a schema of your choice', async () => {
    const pool = connectPostgres();
    const schema = uniqueTable('schema');
    await pool.query(`CREATE SCHEMA ${schema}`);
    const table = `${schema}.events`;
    const stores = Array.from({ length: 4 }, () =>
      createPostgresStore({ pool, table, cleanupIntervalMs: 0 }),
    );
    await Promise.all(stores.map((store) => store.migrate()));
    await stores[0]!.migrate();
    const { rows } = await pool.query(
      `SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = 'events' ORDER BY indexname`,
      [schema],
    );
    expect(rows.map((row) => row.indexname)).toEqual(['events_expires_at', 'events_pkey']);
    expect((await stores[1]!.claim('x', 30_000)).status).toBe('claimed');
  });

  it('takes table names up to 63 characters, and keeps the names of its index and ordering table that it made before', async () => {
    const pool = connectPostgres();
    const schema = uniqueTable('names');
    await pool.query(`CREATE SCHEMA ${schema}`);
    const relations = async () =>
      (
        await pool.query(
          `SELECT relname FROM pg_class WHERE relnamespace = $1::regnamespace AND relkind IN ('r', 'i')`,
          [schema],
        )
      ).rows
        .map((row) => row.relname as string)
        .filter((relname) => !relname.endsWith('pkey')) // Postgres names (and cuts) those itself
        .sort();
    const name = (length: number, fill: string) => `t${fill.repeat(length - 1)}`;
    // Names that worked before keep theirs: the ordering table's in full, the index's cut at 63 as Postgres cut it.
    for (const table of [name(52, 'a'), name(54, 'b')]) {
      const store = createPostgresStore({ pool, table: `${schema}.${table}`, cleanupIntervalMs: 0 });
      await store.migrate();
      expect((await store.claim(crypto.randomUUID(), 30_000)).status).toBe('claimed');
    }
    expect(await relations()).toEqual(
      [
        name(52, 'a'),
        `${name(52, 'a')}_expires_at`,
        `${name(52, 'a')}_ordering`,
        name(54, 'b'),
        `${name(54, 'b')}_expires_`,
        `${name(54, 'b')}_ordering`,
      ].sort(),
    );
    // Longer names, two of them alike but for their last letter: each gets its own index and ordering table.
    await pool.query(`DROP SCHEMA ${schema} CASCADE; CREATE SCHEMA ${schema}`);
    const long = [`${name(62, 'c')}x`, `${name(62, 'c')}y`];
    for (const table of long) {
      const store = createPostgresStore({ pool, table: `${schema}.${table}`, cleanupIntervalMs: 0 });
      await store.migrate();
      const claim = await store.claim(crypto.randomUUID(), 30_000, 'record-1');
      expect(claim.status).toBe('claimed');
      expect(await store.ordering!.enter('record-1', 'owner', 30_000)).toMatchObject({ status: 'entered' });
    }
    const made = await relations();
    expect(made.filter((relname) => long.includes(relname))).toEqual(long);
    expect(made.filter((relname) => /^tc{42}_[0-9a-f]{8}_expires_at$/.test(relname))).toHaveLength(2);
    expect(made.filter((relname) => /^tc{44}_[0-9a-f]{8}_ordering$/.test(relname))).toHaveLength(2);
    expect(made.every((relname) => relname.length <= 63)).toBe(true);
  });

  it('rejects migrate(), never crashes the process, when its connection is dropped mid-way', async () => {
    const pool = connectPostgres();
    const admin = connectPostgres();
    // Another instance migrating the same table: this one waits on the migrate lock with its client checked out.
    const table = uniqueTable('dropped');
    const holder = await admin.connect();
    await holder.query('BEGIN');
    // The migrate lock of that table (an unqualified name: the one in current_schema()).
    await holder.query(
      "SELECT pg_advisory_xact_lock(hashtextextended('workforce-webhooks:migrate:' || current_schema() || '.' || $1, 0))",
      [table],
    );
    const uncaught: unknown[] = [];
    const record = (error: unknown): void => void uncaught.push(error);
    process.prependListener('uncaughtException', record);
    try {
      const store = createPostgresStore({ pool, table, cleanupIntervalMs: 0 });
      const migrating = store.migrate().then(
        () => 'resolved',
        (error: unknown) => `rejected: ${(error as Error).message}`,
      );
      // The migrating connection is dropped (a failover, an admin, a restart).
      await expect
        .poll(async () => {
          const { rows } = await admin.query(
            `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
             WHERE wait_event_type = 'Lock' AND query LIKE '%workforce-webhooks:migrate%' AND pid <> pg_backend_pid()`,
          );
          return rows.length;
        })
        .toBe(1);
      expect(await migrating).toMatch(/^rejected: /);
      await sleep(200);
      expect(uncaught).toEqual([]);
      // The broken client left the pool; the next migrate gets a working one.
      await holder.query('ROLLBACK');
      await store.migrate();
      expect(pool.idleCount).toBe(pool.totalCount);
    } finally {
      process.off('uncaughtException', record);
      await holder.query('ROLLBACK').catch(() => {});
      holder.release();
    }
  });

  it('refuses a missing pool and a table name that is not a plain identifier', () => {
    const pool = connectPostgres();
    expect(() => createPostgresStore({} as never)).toThrow(ConfigurationError);
    for (const table of ['events; DROP TABLE x', 'a.b.c', '"quoted"', '', '1table', `t${'x'.repeat(63)}`])
      expect(() => createPostgresStore({ pool, table })).toThrow(ConfigurationError);
    expect(() => createPostgresStore({ pool, timeoutMs: 0 })).toThrow(ConfigurationError);
  });

  it('lets the owner renew its own lapsed lease while nobody took the id', async () => {
    const { store } = await migrated();
    const id = crypto.randomUUID();
    const claim = await store.claim(id, 100);
    if (claim.status !== 'claimed') throw new Error('expected a claim');
    await sleep(250);
    expect(await store.renew(id, claim.token, 30_000)).toBe(true);
    expect(await store.claim(id, 30_000)).toEqual({ status: 'in_progress' });
    expect(await store.complete(id, claim.token, DAY)).toBe(true);
  });

  it('cleans up expired claims and done ids only, in batches', async () => {
    const { pool, table, store } = await migrated();
    const ids = Array.from({ length: 1200 }, () => crypto.randomUUID());
    await pool.query(
      `INSERT INTO ${table} (id, token, expires_at) SELECT unnest($1::text[]), NULL, now() - interval '1 second'`,
      [ids],
    );
    const live = crypto.randomUUID();
    expect((await store.claim(live, 30_000)).status).toBe('claimed');
    expect(await store.cleanup()).toBe(1200);
    const { rows } = await pool.query(`SELECT id FROM ${table}`);
    expect(rows).toEqual([{ id: live }]);
  });

  it('never makes a delivery wait on the cleanup: locked rows are skipped', async () => {
    const { pool, table, store } = await migrated();
    const id = crypto.randomUUID();
    await pool.query(
      `INSERT INTO ${table} (id, token, expires_at) VALUES ($1, NULL, now() - interval '1 second')`,
      [id],
    );
    const holder = await pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM ${table} WHERE id = $1 FOR UPDATE`, [id]);
      // The row is held by another transaction: the cleanup passes it by instead of waiting.
      expect(await store.cleanup()).toBe(0);
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
    }
    expect(await store.cleanup()).toBe(1);
  });

  it('warns its logger once per run of failed background cleanups (a table migrate() never made), then again after one succeeds', async () => {
    const pool = connectPostgres();
    const table = uniqueTable('unmigrated');
    const logger = recordingLogger();
    const store = createPostgresStore({ pool, table, cleanupIntervalMs: 50, logger });
    try {
      await sleep(400); // several runs, each failing: no table
      const warned = () => logger.lines.filter((line) => line.msg?.includes('cleanup failed'));
      expect(warned()).toEqual([
        {
          level: 'warn',
          obj: { err: expect.any(Error) },
          msg: 'workforce-webhooks: Postgres store cleanup failed',
        },
      ]);
      await store.migrate();
      await sleep(200); // a run succeeds
      await pool.query(`DROP TABLE ${table}`);
      await expect.poll(() => warned().length, { timeout: 5000 }).toBe(2);
    } finally {
      store.close();
    }
  });

  it('fails a call that outlives its deadline, so the receiver answers 503', async () => {
    const { pool, table } = await migrated();
    const store = createPostgresStore({ pool, table, timeoutMs: 300, cleanupIntervalMs: 0 });
    const receiver = createReceiver({ secret, store, logger: recordingLogger() }).on(
      'leave.approved',
      () => {},
    );
    const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
    // A transaction holding the table's lock: every statement on it waits, as on a server that stopped answering.
    const holder = await pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
      const answer = await receiver.handle({
        method: 'POST',
        headers: delivery.headers,
        body: new TextEncoder().encode(delivery.body),
      });
      expect(answer.status).toBe(503);
      expect(JSON.parse(String(answer.body))).toEqual({ error: 'store_unavailable' });
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
    }
    // Served again once Postgres answers. (The timed-out claim may still land when the lock goes: like a lost
    // answer from Redis, it then holds that id for one lease, and the sender's retry after it gets the event in.)
    const next = await createSignedDelivery({ secret, type: 'leave.approved' });
    const again = await receiver.handle({
      method: 'POST',
      headers: next.headers,
      body: new TextEncoder().encode(next.body),
    });
    expect(again.status).toBe(202);
    await receiver.close();
  });
});
