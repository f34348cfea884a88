// The Postgres store on a pool whose sessions have a statement_timeout shorter than the store's timeoutMs.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createPostgresStore } from 'workforce-webhooks/postgres';
import { connectPostgres, postgresUrl, uniqueTable } from '../setup/postgres-helpers.js';

describe.skipIf(!postgresUrl)(
  "the event's turn under a session statement_timeout shorter than timeoutMs",
  () => {
    it('lets an attempt wait for its turn while its signal lasts, then find the earlier commit', async () => {
      const pool = connectPostgres(postgresUrl, { options: '-c statement_timeout=100' });
      const store = createPostgresStore({
        pool,
        table: uniqueTable('stmt_to'),
        timeoutMs: 1000,
        cleanupIntervalMs: 0,
      });
      await store.migrate();
      const id = crypto.randomUUID();
      const first = await store.begin(id);
      if (first === 'committed') throw new Error('expected a transaction');
      try {
        const lasting = store.begin(id, new AbortController().signal).then(
          (tx) => (tx === 'committed' ? 'committed' : 'opened'),
          (error: unknown) => `rejected: ${(error as Error).message}`,
        );
        await sleep(400); // several of the session's statement timeouts
        expect(await first.commit()).toBe(true);
        expect(await lasting).toBe('committed');
        // The handlers' statements keep the session's own statement_timeout.
        const next = await store.begin(crypto.randomUUID());
        if (next === 'committed') throw new Error('expected a transaction');
        expect((await next.client.query('SHOW statement_timeout')).rows[0].statement_timeout).toBe('100ms');
        await next.rollback(false);
      } finally {
        await first.rollback(false);
      }
    });
  },
);
