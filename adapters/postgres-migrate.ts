// The Postgres store's migration: its table, index and ordering table made in one transaction, under a table's lock.
import type { BoundPool } from './postgres-pool.js';

/**
 * The store's `migrate`: runs `statements` in one transaction after `lock` (the transaction's lock_timeout, then an
 * advisory lock), so several instances starting at once do not race to create the same table, and no wait of it
 * outlasts its deadline on the server.
 * @example
 * const bound = createBoundPool({ pool, timeoutMs: 2000 });
 * const migrate = createPostgresMigrate({ pool: bound, lock: sql.migrateLock, statements: sql.migrate });
 * await migrate();
 */
export function createPostgresMigrate({
  pool: { inTime, checkout },
  lock,
  statements,
}: {
  readonly pool: BoundPool;
  readonly lock: string;
  readonly statements: readonly string[];
}): () => Promise<void> {
  return async () => {
    const { client, finish } = await checkout();
    try {
      await inTime(client.query('BEGIN'));
      await inTime(client.query(lock));
      for (const statement of statements) await inTime(client.query(statement));
      await inTime(client.query('COMMIT'));
      finish();
    } catch (error) {
      // Dropping the connection rolls the migration back on the server, whatever state a deadline left it in.
      finish(error as Error);
      throw error;
    }
  };
}
