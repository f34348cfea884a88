// The Postgres store's migration: its table, index and ordering table made in one transaction, under a table's lock.
import type { Logger } from '../src/logger.js';
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

// Read in the migration's transaction: the database's encoding, which every text and jsonb value is converted to.
const ENCODING = `SELECT current_setting('server_encoding') AS encoding`;
// SQL_ASCII stores the bytes it is sent, unconverted: UTF-8 text goes in and comes back whole.
const HOLDS_UTF8 = new Set(['UTF8', 'SQL_ASCII']);

/**
 * True when a database of `encoding` (its `server_encoding`) holds every character: UTF8, or SQL_ASCII.
 * @example
 * if (!holdsEveryCharacter(rows[0].encoding)) logger.warn({ encoding }, 'the database is not UTF8');
 */
export const holdsEveryCharacter = (encoding: string): boolean => HOLDS_UTF8.has(encoding);

/**
 * The store's `migrate`: runs `statements` in one transaction after `lock` (the transaction's lock_timeout, then an
 * advisory lock), so several instances starting at once do not race to create the same table, and no wait of it
 * outlasts its deadline on the server; a database that cannot hold every character is warned of once, with the fix.
 * @example
 * const bound = createBoundPool({ pool, timeoutMs: 2000 });
 * const migrate = createPostgresMigrate({ pool: bound, lock: sql.migrateLock, statements: sql.migrate, logger });
 * await migrate();
 */
export function createPostgresMigrate({
  pool: { inTime, checkout, explain },
  lock,
  statements,
  logger,
}: {
  readonly pool: BoundPool;
  readonly lock: string;
  readonly statements: readonly string[];
  readonly logger: Logger;
}): () => Promise<void> {
  const steps = statements.map(ifMissing);
  let told = false;
  return async () => {
    const { client, finish } = await checkout();
    try {
      await inTime(client.query('BEGIN'));
      await inTime(client.query(lock));
      for (const statement of steps) await inTime(client.query(statement));
      const { rows } = await inTime(client.query<{ encoding: string }>(ENCODING));
      await inTime(client.query('COMMIT'));
      finish();
      // A LATIN1 (or other one-byte) database refuses every character it lacks: an ordering key, an event a queue on
      // this database keeps, or a handler's write holding one fails on every delivery, 503 until the sender gives up.
      // The tables work otherwise, so an app that ran on it keeps starting; said once per store, with the fix.
      const encoding = rows[0]?.encoding;
      if (!told && encoding !== undefined && !holdsEveryCharacter(encoding)) {
        told = true;
        logger.warn(
          { encoding },
          `workforce-webhooks: the Postgres database's encoding is ${encoding}, not UTF8: any ordering key, event data or handler write holding a character ${encoding} lacks fails on every delivery of its event (503); create the database with UTF8 (CREATE DATABASE <name> ENCODING 'UTF8' TEMPLATE template0), move the tables there and point the pool at it`,
        );
      }
    } catch (error) {
      // Dropping the connection rolls the migration back on the server, whatever state a deadline left it in.
      finish(error as Error);
      // A schema that is not there is said with the fix.
      throw explain(error);
    }
  };
}
