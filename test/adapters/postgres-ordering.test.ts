// The Postgres ordering table's cleanup and migration (adapters/postgres-ordering.ts) on a real PostgreSQL: a failing
// event's lapsed hold keeps its row, and so its first entry, for its retries; rows nobody needs go; a table of an
// earlier version gets the run column, and a row an earlier version wrote beside this one reads as it meant.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { OrderingStore } from 'workforce-webhooks';
import { createPostgresStore } from 'workforce-webhooks/postgres';
import { LAPSED_KEPT_MS } from '../../src/ordering-store.js';
import { connectPostgres, postgresUrl, uniqueTable } from '../setup/postgres-helpers.js';

const DAY = 24 * 60 * 60 * 1000;
const maxWaitMs = 150;

// adapters/postgres-ordering.ts at e62ee5f^, the version before runs, on table `t`: it never clears the `run` column
// this version writes.
const oldStatements = (t: string) => ({
  enter: `WITH taken AS (
        INSERT INTO ${t} AS r (record_key, owner, since, lease_until) VALUES ($1, $2, now(), now() + $3 * interval '1 millisecond')
        ON CONFLICT (record_key) DO UPDATE SET
          since = CASE WHEN r.owner = excluded.owner AND r.lease_until >= now() - ${LAPSED_KEPT_MS} * interval '1 millisecond' THEN r.since ELSE now() END,
          owner = excluded.owner, lease_until = excluded.lease_until
        WHERE r.owner IS NULL OR r.owner = excluded.owner OR r.lease_until < now()
        RETURNING 1
      )
      SELECT EXISTS (SELECT 1 FROM taken) AS entered`,
  hold: `UPDATE ${t} SET lease_until = since + $3 * interval '1 millisecond'
      WHERE record_key = $1 AND owner = $2 RETURNING 1`,
});

const migrated = async () => {
  const pool = connectPostgres();
  const table = uniqueTable('ordering');
  const store = createPostgresStore({ pool, table, cleanupIntervalMs: 0 });
  await store.migrate();
  if (store.ordering === undefined) throw new Error('the Postgres store has no ordering');
  return { pool, ordering: `${table}_ordering`, store, keys: store.ordering as OrderingStore };
};

describe.skipIf(!postgresUrl)('Postgres ordering table cleanup', () => {
  it("keeps a lapsed hold's first entry through a cleanup, so its retry does not hold newer events again", async () => {
    const { store, keys } = await migrated();
    const key = crypto.randomUUID();
    expect((await keys.enter(key, 'failing', 30_000)).status).toBe('entered');
    expect(await keys.hold(key, 'failing', maxWaitMs)).toBe(true);
    await sleep(maxWaitMs * 2);
    await store.cleanup(); // counts dedupe rows only
    expect((await keys.enter(key, 'failing', 30_000)).status).toBe('entered');
    expect(await keys.hold(key, 'failing', maxWaitMs)).toBe(true);
    expect((await keys.enter(key, 'newer', 30_000)).status).toBe('entered');
  });

  it('deletes rows whose owner left and whose watermark ended, and holds nobody came back to for a day', async () => {
    const { pool, ordering, store, keys } = await migrated();
    const [left, marked, running, forgotten] = Array.from({ length: 4 }, () => crypto.randomUUID());
    await keys.enter(left!, 'a', 30_000);
    await keys.leave(left!, 'a', undefined, DAY);
    await keys.leave(marked!, 'b', '000001700000000000000 b 2023-11-14T22:13:20Z', DAY);
    await keys.enter(running!, 'c', 30_000);
    await keys.enter(forgotten!, 'd', 30_000);
    await keys.hold(forgotten!, 'd', maxWaitMs);
    await pool.query(
      `UPDATE ${ordering} SET since = since - $2 * interval '1 millisecond',
        lease_until = lease_until - $2 * interval '1 millisecond' WHERE record_key = $1`,
      [forgotten, LAPSED_KEPT_MS + 1000],
    );
    await store.cleanup(); // counts dedupe rows only
    const { rows } = await pool.query(`SELECT record_key FROM ${ordering} ORDER BY record_key`);
    expect(rows.map((row) => row.record_key)).toEqual([marked, running].sort());
    // The forgotten hold's event, back after all: a first entry, with a new wait bound.
    expect((await keys.enter(forgotten!, 'd', 30_000)).status).toBe('entered');
    expect(await keys.hold(forgotten!, 'd', 60_000)).toBe(true);
    expect((await keys.enter(forgotten!, 'newer', 30_000)).status).toBe('busy');
  });
});

describe.skipIf(!postgresUrl)('Postgres ordering table migration', () => {
  it('gives an ordering table made by an earlier version its run column on migrate(), its rows kept', async () => {
    const pool = connectPostgres();
    const table = uniqueTable('ordering_old');
    const ordering = `${table}_ordering`;
    await pool.query(`CREATE TABLE ${ordering} (record_key text PRIMARY KEY, owner text,
      since timestamptz NOT NULL, lease_until timestamptz, mark text, mark_until timestamptz)`);
    const key = crypto.randomUUID();
    await pool.query(
      `INSERT INTO ${ordering} (record_key, owner, since, lease_until)
        VALUES ($1, 'event', now() - interval '1 second', now() + interval '30 seconds')`,
      [key],
    );
    const store = createPostgresStore({ pool, table, cleanupIntervalMs: 0 });
    await store.migrate();
    await store.migrate(); // every start: nothing left to add
    const keys = store.ordering as OrderingStore;
    const since = async () =>
      (await pool.query(`SELECT since::text FROM ${ordering} WHERE record_key = $1`, [key])).rows[0]?.since;
    const first = await since();
    expect((await keys.enter(key, 'newer', 30_000, 'run-9')).status).toBe('busy');
    // A row of the earlier version names no run: the event's run takes it, keeping its first entry.
    expect((await keys.enter(key, 'event', 30_000, 'run-2')).status).toBe('entered');
    expect(await since()).toBe(first);
    expect((await keys.enter(key, 'event', 30_000, 'run-3')).status).toBe('busy');
    expect(await keys.leave(key, 'event', undefined, DAY, 'run-2')).toBe(true);
  });

  // An earlier instance that takes a key a run of this version let lapse keeps that run's name on the row: read as
  // the new owner's run, its hold would look like another run's live lease.
  it("gives a failing event's hold, made by a version before runs, to the event's next run at once", async () => {
    const { pool, ordering, keys } = await migrated();
    const old = oldStatements(ordering);
    const key = crypto.randomUUID();
    expect((await keys.enter(key, 'older', 100, 'new-instance:1')).status).toBe('entered');
    await sleep(250);
    expect((await pool.query(old.enter, [key, 'failing', 30_000])).rows[0].entered).toBe(true);
    expect((await pool.query(old.hold, [key, 'failing', 30_000])).rowCount).toBe(1);
    expect((await keys.enter(key, 'newer', 30_000, 'new-instance:3')).status).toBe('busy');
    expect((await keys.enter(key, 'failing', 30_000, 'new-instance:2')).status).toBe('entered');
    expect(await keys.renew?.(key, 'older', 'new-instance:1', 30_000)).toBe(false);
  });
});
