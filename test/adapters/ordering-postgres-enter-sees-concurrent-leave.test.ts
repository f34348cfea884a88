// An older event taking a record's key on Postgres while the newer event's watermark write is still landing (two
// instances, one table): the key it takes must come with the newer event's watermark, never the one from before it.
import { describe, expect, it } from 'vitest';
import type { OrderingStore } from 'workforce-webhooks';
import { createPostgresStore } from 'workforce-webhooks/postgres';
import { orderingStatements, recordKey } from '../../adapters/postgres-ordering.js';
import { markOf } from '../../src/ordering-mark.js';
import { connectPostgres, postgresUrl, uniqueTable } from '../setup/postgres-helpers.js';

const DAY = 24 * 60 * 60 * 1000;

describe.skipIf(!postgresUrl)('Postgres ordering: an entry racing the previous owner leaving', () => {
  it('takes the key with the watermark the leaving event wrote, so the older event is found stale', async () => {
    const pool = connectPostgres();
    const table = uniqueTable('ordering_race');
    // A wide deadline: the entry waits on the leaving row's lock until this test lets the leave commit.
    const store = createPostgresStore({ pool, table, cleanupIntervalMs: 0, timeoutMs: 60_000 });
    await store.migrate();
    const keys = store.ordering as OrderingStore;
    const key = crypto.randomUUID();
    const newer = markOf({ id: crypto.randomUUID(), occurredAt: '2026-03-01T10:00:02Z' });
    expect((await keys.enter(key, 'newer', 30_000, 'run-n')).status).toBe('entered');

    // The newer event's leave, as the store sends it, on another instance's connection: begun, not yet committed.
    const leaving = await pool.connect();
    try {
      await leaving.query('BEGIN');
      const sql = orderingStatements(`"${table}_ordering"`, 60_000);
      const { rows } = await leaving.query(sql.leave, [recordKey(key), 'newer', newer, DAY, 'run-n']);
      expect(rows).toEqual([{ had: true }]);

      // The older event's entry starts now, and waits for the leaving row; the leave lands once it waits.
      const entry = Promise.resolve(keys.enter(key, 'older', 30_000, 'run-o'));
      let answered = false;
      const answer = (): void => {
        answered = true;
      };
      entry.then(answer, answer);
      // An entry that answers without waiting (it found the key busy) ends the wait: the assertion below says so.
      while (!answered) {
        const waiting = await pool.query(
          `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND position($1 in query) > 0`,
          [`${table}_ordering`],
        );
        if (waiting.rows.length > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await leaving.query('COMMIT');

      expect(await entry).toEqual({ status: 'entered', watermark: newer });
    } finally {
      leaving.release();
    }
    // Through the store as well: the key's watermark is the newer event's.
    expect(await keys.watermark(key)).toBe(newer);
  });
});
