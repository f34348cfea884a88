// The Postgres store beside locks it does not hold, racing claims, handlers that release their client, odd record keys.
import { describe, expect, it } from 'vitest';
import { createMemoryStore, createReceiver, type Receiver } from 'workforce-webhooks';
import { createPostgresStore } from 'workforce-webhooks/postgres';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { connectPostgres, postgresUrl, uniqueTable } from '../setup/postgres-helpers.js';
import { recordingLogger } from '../support/logger.js';

const secret = 'whsec_postgres_faults_test';

// How a call ended, for a plain comparison: what it resolved with, or why it rejected.
const settle = (promise: Promise<unknown>): Promise<string> =>
  promise.then(
    (value) => String(value ?? 'ok'),
    (error: Error) => `failed: ${error.message}`,
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

async function post(receiver: Receiver) {
  const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
  const answer = await receiver.handle({
    method: 'POST',
    headers: delivery.headers,
    body: new TextEncoder().encode(delivery.body),
  });
  return { id: delivery.event.id, status: answer.status };
}

describe.skipIf(!postgresUrl)('migrate() beside open writes', () => {
  it('migrates an up-to-date table without waiting on an open write, and claims go on', async () => {
    const pool = connectPostgres(postgresUrl, { max: 6 });
    const table = uniqueTable('busy');
    const store = createPostgresStore({ pool, table, timeoutMs: 1000, cleanupIntervalMs: 0 });
    await store.migrate(); // the first deploy: table, index and ordering table made
    // A transaction that wrote a row and is still open (a slow transaction of the app, a long batch).
    const writer = await pool.connect();
    try {
      await writer.query('BEGIN');
      await writer.query(`INSERT INTO "${table}" (id, token, expires_at) VALUES ($1, 'x', now())`, [
        crypto.randomUUID(),
      ]);
      // The next instance starts, and a delivery comes after its migrate() answered.
      const migrate = await settle(store.migrate());
      const claim = await settle(store.claim(crypto.randomUUID(), 30_000).then((answer) => answer.status));
      expect({ migrate, claim, waiting: await waiting(pool, table, 'CREATE INDEX') }).toEqual({
        migrate: 'ok',
        claim: 'claimed',
        waiting: 0,
      });
    } finally {
      await writer.query('ROLLBACK').catch(() => {});
      writer.release();
    }
  });

  it('gives up on the server too a migration that waited on an open write past its deadline', async () => {
    const pool = connectPostgres(postgresUrl, { max: 6 });
    const admin = connectPostgres();
    const table = uniqueTable('busy');
    const store = createPostgresStore({ pool, table, timeoutMs: 500, cleanupIntervalMs: 0 });
    await store.migrate();
    // The index missing (a table made by hand, say): this migration has a table lock to wait for.
    await pool.query(`DROP INDEX "${table}_expires_at"`);
    const writer = await pool.connect();
    try {
      await writer.query('BEGIN');
      await writer.query(`INSERT INTO "${table}" (id, token, expires_at) VALUES ($1, 'x', now())`, [
        crypto.randomUUID(),
      ]);
      expect(await settle(store.migrate())).toMatch(/^failed: /);
      // Its lock request gone from the server, no claim queues behind it.
      await expect.poll(() => waiting(admin, table, 'DO'), { timeout: 5000 }).toBe(0);
      expect((await store.claim(crypto.randomUUID(), 30_000)).status).toBe('claimed');
    } finally {
      await writer.query('ROLLBACK').catch(() => {});
      writer.release();
    }
    expect(await settle(store.migrate())).toBe('ok');
  });
});

describe.skipIf(!postgresUrl)('claims given up on while a row is locked', () => {
  it('answers in time a claim of a row another transaction holds, and leaves no statement waiting on the server', async () => {
    const pool = connectPostgres(postgresUrl, { max: 10 });
    const admin = connectPostgres();
    const table = uniqueTable('orphan');
    const store = createPostgresStore({ pool, table, timeoutMs: 300, cleanupIntervalMs: 0 });
    await store.migrate();
    const id = crypto.randomUUID();
    expect((await store.claim(id, 30_000)).status).toBe('claimed');
    // A transaction holds the event's row and stops answering (an app transaction on the row, an attempt frozen
    // between its done mark and its COMMIT): Postgres keeps it until TCP keepalives give up.
    const holder = await admin.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`UPDATE ${table} SET expires_at = now() - interval '1 second' WHERE id = $1`, [id]);
      // The sender retries the delivery five times; each claim times out (503): the client's deadline or the
      // server's lock_timeout, both set to timeoutMs, whichever ends first.
      for (let retry = 0; retry < 5; retry++)
        await expect(store.claim(id, 30_000)).rejects.toThrow(/no answer within 300 ms|lock timeout/);
      await expect.poll(() => waiting(admin, table, 'WITH taken'), { timeout: 5000 }).toBe(0);
    } finally {
      await holder.query('ROLLBACK').catch(() => {});
      holder.release();
    }
  });

  it("keeps the session's own lock_timeout after a claim", async () => {
    const pool = connectPostgres(postgresUrl, { max: 1, options: '-c lock_timeout=4321' });
    const store = createPostgresStore({
      pool,
      table: uniqueTable('lt'),
      timeoutMs: 300,
      cleanupIntervalMs: 0,
    });
    await store.migrate();
    expect((await store.claim(crypto.randomUUID(), 30_000)).status).toBe('claimed');
    expect((await pool.query('SHOW lock_timeout')).rows[0].lock_timeout).toBe('4321ms');
  });
});

describe.skipIf(!postgresUrl)('claims racing on an expired done id', () => {
  it('answers in_progress, never done, to the claim that lost a take-over of an expired done id', async () => {
    const pool = connectPostgres(postgresUrl, { max: 4 });
    const table = uniqueTable('race');
    const store = createPostgresStore({ pool, table, timeoutMs: 5000, cleanupIntervalMs: 0 });
    await store.migrate();
    const id = crypto.randomUUID();
    // Done long ago: its dedupe window has ended and the cleanup has not deleted it yet.
    await pool.query(
      `INSERT INTO ${table} (id, token, expires_at) VALUES ($1, NULL, now() - interval '1 minute')`,
      [id],
    );
    // Something holds the row a moment (the cleanup's batch, another claim), so both deliveries queue on it.
    const holder = await pool.connect();
    await holder.query('BEGIN');
    await holder.query(`SELECT 1 FROM ${table} WHERE id = $1 FOR UPDATE`, [id]);
    const claims = [store.claim(id, 30_000), store.claim(id, 30_000)];
    const admin = connectPostgres();
    await expect.poll(() => waiting(admin, table, 'WITH taken'), { timeout: 4000 }).toBe(2);
    await holder.query('COMMIT');
    holder.release();
    const statuses = (await Promise.all(claims)).map((claim) => claim.status).sort();
    // One takes it; the other is not told the event is done while the first has not run it yet.
    expect(statuses).toEqual(['claimed', 'in_progress']);
  });
});

describe.skipIf(!postgresUrl)('a handler that releases its transaction client', () => {
  it("keeps the event's open transaction out of the pool when a handler releases its client", async () => {
    const pool = connectPostgres(postgresUrl, { max: 10 });
    const table = uniqueTable('release');
    const app = uniqueTable('release_app');
    const store = createPostgresStore({ pool, table, cleanupIntervalMs: 0 });
    await store.migrate();
    await pool.query(`CREATE TABLE ${app} (event_id text NOT NULL)`);
    const receiver = createReceiver({ secret, store, logger: recordingLogger(), mode: 'inline' });
    const other = crypto.randomUUID();
    let otherClaim: string | undefined;
    receiver.on('leave.approved', async (event, ctx) => {
      const db = await ctx.transaction();
      try {
        await db.query(`INSERT INTO ${app} VALUES ($1)`, [event.id]);
      } finally {
        db.release();
      }
      // Meanwhile another delivery is claimed on the same pool.
      otherClaim = (await store.claim(other, 30_000)).status;
      throw new Error('the handler fails after its writes');
    });
    const first = await post(receiver);
    expect(first.status).toBe(500);
    expect(otherClaim).toBe('claimed');
    // The other event's claim was not rolled back with the failed attempt: it still holds the id.
    expect((await store.claim(other, 30_000)).status).toBe('in_progress');
    const { rows } = await pool.query(`SELECT count(*)::int AS n FROM ${app}`);
    expect(rows[0].n).toBe(0);
    await receiver.close();
  });

  it('commits an attempt whose handler released its client, with no error', async () => {
    const pool = connectPostgres(postgresUrl, { max: 4 });
    const table = uniqueTable('release');
    const app = uniqueTable('release_app');
    const store = createPostgresStore({ pool, table, cleanupIntervalMs: 0 });
    await store.migrate();
    await pool.query(`CREATE TABLE ${app} (event_id text NOT NULL)`);
    const logger = recordingLogger();
    const receiver = createReceiver({ secret, store, logger, mode: 'inline' });
    receiver.on('leave.approved', async (event, ctx) => {
      const db = await ctx.transaction();
      try {
        await db.query(`INSERT INTO ${app} VALUES ($1)`, [event.id]);
      } finally {
        db.release();
      }
    });
    const first = await post(receiver);
    const { rows } = await pool.query(`SELECT count(*)::int AS n FROM ${app} WHERE event_id = $1`, [
      first.id,
    ]);
    const [mark] = (await pool.query(`SELECT committed FROM ${table} WHERE id = $1`, [first.id])).rows;
    const errors = logger.lines
      .filter((line) => line.level !== 'debug' && line.level !== 'info')
      .map((line) => (line.obj.err as Error | undefined)?.message ?? line.msg);
    expect({ status: first.status, rows: rows[0].n, committed: mark?.committed, errors }).toEqual({
      status: 200,
      rows: 1,
      committed: true,
      errors: [],
    });
    // The client went back to the pool once, and serves the next checkout.
    expect(pool.totalCount - pool.idleCount).toBe(0);
    expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    await receiver.close();
  });
});

describe.skipIf(!postgresUrl)('record keys the Postgres text type refuses', () => {
  it('claims and orders an event whose short record key holds a NUL character, as the memory store does', async () => {
    const key = 'employee:ann\u0000smith';
    expect((await createMemoryStore().claim(crypto.randomUUID(), 30_000, key)).status).toBe('claimed');
    const store = createPostgresStore({
      pool: connectPostgres(),
      table: uniqueTable('nul'),
      cleanupIntervalMs: 0,
    });
    await store.migrate();
    expect(await settle(store.claim(crypto.randomUUID(), 30_000, key).then((claim) => claim.status))).toBe(
      'claimed',
    );
    expect(await store.ordering!.enter(key, 'owner', 30_000)).toMatchObject({ status: 'entered' });
    // Kept apart from the same key without its NUL.
    expect(await store.ordering!.enter('employee:annsmith', 'another', 30_000)).toMatchObject({
      status: 'entered',
    });
    expect(await store.ordering!.enter(key, 'another', 30_000)).toMatchObject({ status: 'busy' });
  });
});
