// Copies of one event claimed at once on a database whose default isolation is REPEATABLE READ or SERIALIZABLE.
import { describe, expect, it } from 'vitest';
import { createPostgresStore } from 'workforce-webhooks/postgres';
import { connectPostgres, postgresUrl, uniqueTable } from '../setup/postgres-helpers.js';

describe.skipIf(!postgresUrl)('claims racing on one id under a stricter default isolation', () => {
  for (const level of ['repeatable read', 'serializable']) {
    it(`claims each id once and answers every other copy in_progress, never a store failure (default ${level})`, async () => {
      const pool = connectPostgres(postgresUrl, {
        max: 16,
        options: `-c default_transaction_isolation=${level.replace(' ', '\\ ')}`,
      });
      const store = createPostgresStore({ pool, table: uniqueTable('claim_iso'), cleanupIntervalMs: 0 });
      await store.migrate();
      const answers: Record<string, number> = {};
      for (let round = 0; round < 60; round++) {
        const id = crypto.randomUUID();
        // Eight copies of one event, delivered to eight instances at the same moment.
        const copies = await Promise.all(
          Array.from({ length: 8 }, () =>
            store.claim(id, 30_000).then(
              (claim) => claim.status,
              (error: { code?: string; message: string }) => `failed: ${error.code ?? error.message}`,
            ),
          ),
        );
        for (const answer of copies) answers[answer] = (answers[answer] ?? 0) + 1;
      }
      expect(answers).toEqual({ claimed: 60, in_progress: 60 * 7 });
      store.close();
    });
  }
});
