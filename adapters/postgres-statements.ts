// The SQL of the Postgres store's table: its migration, a statement per store call, the handler transaction's steps.
import { LAPSED_KEPT_MS } from '../src/ordering-store.js';
import type { TableNames } from './postgres-names.js';
import { boundLockWait, msFromNow } from './postgres-ordering.js';

/** How many expired rows one cleanup statement deletes. */
export const CLEANUP_BATCH = 500;

/** The statements of one table, from `storeStatements`. */
export interface StoreStatements {
  readonly migrate: readonly string[];
  readonly migrateLock: string;
  readonly open: string;
  readonly claim: string;
  readonly renew: string;
  readonly complete: string;
  readonly release: string;
  readonly retract: string;
  readonly lock: string;
  readonly committed: string;
  readonly commit: string;
  readonly cleanup: string;
}

/**
 * The statements of the table `names` (from `tableNames`); `lockTimeoutMs` bounds, on the server, one wait for an
 * event's lock, each store call's wait for its row and the migration's waits.
 * @example
 * const sql = storeStatements(tableNames('workforce_webhook_events'), 2000);
 * await pool.query(sql.claim, [id, token, leaseMs]);
 */
export function storeStatements(
  { table: t, index, created }: TableNames,
  lockTimeoutMs: number,
): StoreStatements {
  const ms = msFromNow;
  // The index's own name, unquoted: the checked names hold no quote.
  const indexName = index.slice(1, -1);
  // lock_timeout for one statement only, in its FROM (USING for a DELETE), which runs before the row is locked.
  const bound = boundLockWait(lockTimeoutMs);
  return {
    migrate: [
      // A read-only server (a replica, a primary during failover) is said at start: the tables may all be there, so no
      // DDL would fail, yet every claim will. Its SQLSTATE is a claim's there, which `explained` says with the fix.
      `DO $$ BEGIN
        IF current_setting('transaction_read_only') = 'on' THEN
          RAISE EXCEPTION 'transaction_read_only = on' USING ERRCODE = 'read_only_sql_transaction';
        END IF;
      END $$`,
      // A claim holds its owner's token until done (token NULL). `committed`: a handler transaction carried the done mark.
      `CREATE TABLE IF NOT EXISTS ${t} (
        id text PRIMARY KEY,
        token text,
        expires_at timestamptz NOT NULL,
        committed boolean NOT NULL DEFAULT false
      )`,
      // CREATE INDEX IF NOT EXISTS takes the table's ShareLock even when the index exists, queued behind every open
      // write and queueing every claim behind it: looked up first (a relation of that name in the table's schema, as
      // IF NOT EXISTS checks), so a table that has it (every start after the first) takes no lock.
      `DO $$ BEGIN
        IF NOT EXISTS (SELECT 1 FROM pg_class WHERE relname = '${indexName}'
          AND relnamespace = (SELECT relnamespace FROM pg_class WHERE oid = '${t}'::regclass)) THEN
          CREATE INDEX IF NOT EXISTS ${index} ON ${t} (expires_at);
        END IF;
      END $$`,
    ],
    // Several instances starting at once: one creates, the others find it made. Per table, so the stores of two
    // tables (two apps, two schemas) never wait on each other's migration. lock_timeout, for the whole migration,
    // has the server give up a wait (this lock, a table's) when the client does, instead of holding a lock request
    // that every later claim queues behind.
    migrateLock: `SET LOCAL lock_timeout = '${lockTimeoutMs}ms';
      SELECT pg_advisory_xact_lock(hashtextextended('workforce-webhooks:migrate:' || ${created}, 0))`,
    // One statement: insert, or take over a row whose lease or done mark has passed. A row left alone is read
    // from the statement's snapshot; one committed after it (a claim racing this one) is in progress, and so is one
    // that had passed there (another claim took it over meanwhile, or its owner renewed or completed it: never
    // done on a version this claim did not see). A wait for the row (a transaction holding it) is bounded on the
    // server too, by lock_timeout set for this statement only (a function in FROM runs before the insert): a claim
    // given up on by the client leaves no statement waiting on the server.
    claim: `WITH taken AS (
        INSERT INTO ${t} AS e (id, token, expires_at)
        SELECT $1, $2, ${ms('$3')} FROM ${bound}
        ON CONFLICT (id) DO UPDATE SET token = excluded.token, expires_at = excluded.expires_at, committed = false
        WHERE e.expires_at < now()
        RETURNING 1
      )
      SELECT EXISTS (SELECT 1 FROM taken) AS claimed,
        (SELECT (token IS NULL OR committed) AND expires_at >= now() FROM ${t} WHERE id = $1) AS done`,
    // The owner keeps its lease, even one that has passed, while nobody took the id over (a take-over changes the token).
    // A row its handler transaction committed is kept as the commit left it (the dedupe window), and still answers
    // its owner: inline, a renewal that lands just after the commit is no lost lease. Like every call on a row, its
    // wait for a transaction holding the row is bounded on the server, as a claim's is.
    renew: `UPDATE ${t} SET expires_at = CASE WHEN committed THEN expires_at ELSE ${ms('$3')} END
      FROM ${bound} AS bound WHERE id = $1 AND token = $2 RETURNING 1`,
    // Like renew: the owner's token, even past its lease while nobody took the id, so a late done mark still lands.
    complete: `UPDATE ${t} SET token = NULL, expires_at = ${ms('$3')} FROM ${bound} AS bound
      WHERE id = $1 AND token = $2 RETURNING 1`,
    // A row whose handler transaction committed is done whatever happens to its claim. USING is a DELETE's FROM:
    // the subquery runs before the row is locked (a volatile output keeps the planner from inlining it away).
    release: `DELETE FROM ${t} USING (SELECT ${bound}) AS bound
      WHERE id = $1 AND token = $2 AND expires_at >= now() AND NOT committed RETURNING 1`,
    // `release` of many claims at once ($1 ids, $2 their tokens): claims whose answer never came, that may have landed.
    // A row another transaction holds is skipped, not waited for (tried again later): nothing waits on the server.
    retract: `DELETE FROM ${t} WHERE id IN (
        SELECT e.id FROM ${t} AS e JOIN unnest($1::text[], $2::text[]) AS c(id, token)
          ON e.id = c.id AND e.token = c.token
        WHERE NOT e.committed FOR UPDATE OF e SKIP LOCKED
      )`,
    // One round trip: the transaction, and a bound on the server for the wait for the event's lock, which the
    // session's statement_timeout does not cut short (a shorter one would fail the wait instead of letting the
    // attempt wait again). The session's two settings are read first (a function in FROM runs before the target
    // list), for `committed` to put back; the backend's pid, for a statement to be cancelled there once the client
    // gave it up (behind a pooler too, which gives the client a pid of its own).
    // READ COMMITTED whatever the database's default: each statement sees what committed before it, so the attempt
    // that waited for its turn sees an earlier attempt's commit, and the done mark lands on a row that renewals
    // updated meanwhile (under REPEATABLE READ or SERIALIZABLE both would fail to serialize, on every retry).
    open: `BEGIN ISOLATION LEVEL READ COMMITTED; SELECT prior, "priorStatement", pg_backend_pid() AS pid, ${bound},
        set_config('statement_timeout', '0', true)
      FROM current_setting('lock_timeout') AS prior, current_setting('statement_timeout') AS "priorStatement"`,
    // Attempts at one event take their turns, and one that comes after a commit sees it. The key holds the table's
    // oid, as this session resolves the name: stores on two tables never wait on each other for the same event id,
    // and two spellings of one table (`events`, `public.events`) still take turns.
    lock: `SELECT pg_advisory_xact_lock(
      hashtextextended('workforce-webhooks:' || '${t}'::regclass::oid || ':' || $1, 0))`,
    // Once the lock is held, the handlers' statements get the session's lock_timeout and statement_timeout back.
    committed: `SELECT (SELECT committed FROM ${t} WHERE id = $1) AS committed, set_config('lock_timeout', $2, true),
      set_config('statement_timeout', $3, true)`,
    // The done mark, written in the handlers' transaction: the row is done whatever becomes of its claim. Its wait
    // for the row (another transaction holding it) is bounded on the server as every store call's is, and so is the
    // COMMIT's after it (lock_timeout stays set till the transaction ends): a commit the client gave up on and dropped
    // would otherwise wait there on, holding the event's turn and the handlers' rows, as long as the holder lives.
    commit: `INSERT INTO ${t} AS e (id, token, expires_at, committed) SELECT $1, NULL, ${ms('$2')}, true FROM ${bound}
      ON CONFLICT (id) DO UPDATE SET committed = true, expires_at = GREATEST(e.expires_at, excluded.expires_at)
      WHERE NOT e.committed
      RETURNING 1`,
    // Done ids once their window passed; a claim only LAPSED_KEPT_MS past its lease (as the ordering table keeps a
    // lapsed lease): while nobody took the id, its owner may still renew it or mark it done, and a deleted claim
    // would make that a lost lease, and the event's redelivery run again. A claim left by a process that died is
    // taken over by the next delivery all the same; the row only waits for this to go.
    cleanup: `DELETE FROM ${t} WHERE id IN (
        SELECT id FROM ${t} WHERE expires_at < now()
          AND (token IS NULL OR committed OR expires_at < now() - ${LAPSED_KEPT_MS} * interval '1 millisecond')
        LIMIT ${CLEANUP_BATCH} FOR UPDATE SKIP LOCKED
      )`,
  };
}
