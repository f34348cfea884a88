// The event's transaction under a stricter default isolation (REPEATABLE READ, SERIALIZABLE): it runs READ COMMITTED.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createReceiver } from 'workforce-webhooks';
import { createPostgresStore } from 'workforce-webhooks/postgres';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { connectPostgres, postgresUrl, uniqueTable } from '../setup/postgres-helpers.js';
import { recordingLogger } from '../support/logger.js';

const secret = 'whsec_postgres_isolation_test';

const stricter = [
  ['repeatable read', 'repeatable\\ read'],
  ['serializable', 'serializable'],
] as const;

describe.skipIf(!postgresUrl)('the event transaction under a stricter default isolation', () => {
  for (const [level, option] of stricter) {
    it(`lets an attempt that waited for its turn find the earlier commit (default ${level})`, async () => {
      const pool = connectPostgres(postgresUrl, { options: `-c default_transaction_isolation=${option}` });
      expect((await pool.query('SHOW transaction_isolation')).rows[0].transaction_isolation).toBe(level);
      const table = uniqueTable('iso');
      const store = createPostgresStore({ pool, table, timeoutMs: 5000, cleanupIntervalMs: 0 });
      await store.migrate();
      const id = crypto.randomUUID();
      const first = await store.begin(id, new AbortController().signal);
      if (first === 'committed') throw new Error('expected a transaction');
      // A second attempt at the same event (a take-over, a stalled job's retry) waits for its turn.
      const second = store.begin(id, new AbortController().signal);
      const admin = connectPostgres();
      await expect
        .poll(async () => {
          const { rows } = await admin.query(
            `SELECT count(*)::int AS n FROM pg_stat_activity
             WHERE wait_event_type = 'Lock' AND wait_event = 'advisory' AND query LIKE '%' || $1 || '%'`,
            [table],
          );
          return rows[0].n;
        })
        .toBeGreaterThan(0);
      expect(await first.commit()).toBe(true);
      const answer = await second;
      if (answer !== 'committed') await answer.rollback(false);
      expect(answer).toBe('committed');
    });

    it(`gives handlers a READ COMMITTED transaction (default ${level})`, async () => {
      const pool = connectPostgres(postgresUrl, { options: `-c default_transaction_isolation=${option}` });
      const store = createPostgresStore({ pool, table: uniqueTable('iso'), cleanupIntervalMs: 0 });
      await store.migrate();
      const tx = await store.begin(crypto.randomUUID(), new AbortController().signal);
      if (tx === 'committed') throw new Error('expected a transaction');
      const { rows } = await tx.client.query('SHOW transaction_isolation');
      expect(rows[0].transaction_isolation).toBe('read committed');
      await tx.rollback(false);
    });
  }

  it('commits a transactional handler that outlives a lease renewal (default repeatable read)', async () => {
    const pool = connectPostgres(postgresUrl, {
      options: '-c default_transaction_isolation=repeatable\\ read',
    });
    const table = uniqueTable('rr');
    const app = uniqueTable('rr_app');
    const store = createPostgresStore({ pool, table, cleanupIntervalMs: 0 });
    await store.migrate();
    await pool.query(`CREATE TABLE ${app} (event_id text NOT NULL)`);
    const logger = recordingLogger();
    // leaseMs 600: renewed every 200 ms, so the handler below outlives a renewal (the default 30 s: every 10 s).
    const receiver = createReceiver({ secret, store, logger, leaseMs: 600, mode: 'inline' });
    receiver.on('leave.approved', async (event, ctx) => {
      const db = await ctx.transaction();
      await db.query(`INSERT INTO ${app} VALUES ($1)`, [event.id]);
      await sleep(500);
    });
    const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
    const statuses: number[] = [];
    // The sender's delivery and two retries.
    for (let attempt = 0; attempt < 3; attempt++) {
      const answer = await receiver.handle({
        method: 'POST',
        headers: delivery.headers,
        body: new TextEncoder().encode(delivery.body),
      });
      statuses.push(answer.status);
    }
    const errors = logger.lines
      .filter((line) => line.level !== 'debug')
      .map((line) => `${line.level}: ${line.msg} ${(line.obj.err as Error | undefined)?.message ?? ''}`);
    const { rows } = await pool.query(`SELECT count(*)::int AS n FROM ${app}`);
    expect({ statuses, rows: rows[0].n, errors: [...new Set(errors)] }).toEqual({
      statuses: [200, 200, 200],
      rows: 1,
      errors: [],
    });
    await receiver.close();
  }, 30_000);
});
