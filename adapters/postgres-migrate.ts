// The Postgres store's migration: its table, index and ordering table made in one transaction, under a table's lock.
import type { BoundPool } from './postgres-pool.js';

// `CREATE TABLE IF NOT EXISTS <quoted name>`, as the store's and the ordering table's migrations start.
const CREATE_TABLE = /^\s*CREATE TABLE IF NOT EXISTS ((?:"\w+"\.)?"\w+")/;

// Postgres checks the schema's CREATE privilege before IF NOT EXISTS: an app role that may only read and write the
// tables (an admin or the CLI made them) would fail every start's migrate() on a table that is there. Looked up
// first, a table that exists takes no DDL (the name resolves as the CREATE would; checked names hold no quote of
// a string, nor `$$`).
function ifMissing(statement: string): string {
  const table = CREATE_TABLE.exec(statement)?.[1];
  if (table === undefined) return statement;
  return `DO $$ BEGIN
    IF to_regclass('${table}') IS NULL THEN
      ${statement.trim()};
    END IF;
  END $$`;
}

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
  pool: { inTime, checkout, explain },
  lock,
  statements,
}: {
  readonly pool: BoundPool;
  readonly lock: string;
  readonly statements: readonly string[];
}): () => Promise<void> {
  const steps = statements.map(ifMissing);
  return async () => {
    const { client, finish } = await checkout();
    try {
      await inTime(client.query('BEGIN'));
      await inTime(client.query(lock));
      for (const statement of steps) await inTime(client.query(statement));
      await inTime(client.query('COMMIT'));
      finish();
    } catch (error) {
      // Dropping the connection rolls the migration back on the server, whatever state a deadline left it in.
      finish(error as Error);
      // A schema that is not there is said with the fix.
      throw explain(error);
    }
  };
}
