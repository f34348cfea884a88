// The Postgres side of ordering (spec rule 4): a per-key lease and watermark in one table, each step one statement.

import { createHash } from 'node:crypto';
import type { QueryResultRow } from 'pg';
import { LAPSED_KEPT_MS, type OrderingStore } from '../src/ordering-store.js';
import { createRetractions } from './postgres-retract.js';

/**
 * SQL for `now()` plus the milliseconds of a statement parameter, e.g. `$3`.
 * @example
 * `UPDATE t SET expires_at = ${msFromNow('$3')} WHERE id = $1`;
 */
export const msFromNow = (parameter: string): string => `now() + ${parameter} * interval '1 millisecond'`;

/**
 * SQL that sets lock_timeout for the current statement only, put in its FROM (or USING) so it runs before the
 * statement takes a row lock: a call the client gave up on leaves nothing waiting on the server for that row.
 * @example
 * `UPDATE t SET expires_at = now() FROM ${boundLockWait(2000)} WHERE id = $1`;
 */
export const boundLockWait = (lockTimeoutMs: number): string =>
  `set_config('lock_timeout', '${lockTimeoutMs}ms', true)`;

// A UTF-16 code unit of a surrogate pair standing alone (the `u` flag reads a pair as one code point).
const LONE_SURROGATE = /\p{Surrogate}/u;

/**
 * The table's key for a record key. A btree entry holds at most 2 704 bytes, so a key that might not fit (over 600
 * characters, up to 1 800 bytes in UTF-8) is stored as its SHA-256 instead, as the memory and Redis stores take it;
 * so is a key holding a NUL character, which `text` refuses, and one starting `sha256` (else `sha256:<hex>` typed by
 * the user would be the record of the key that hashes to it). A key with a lone surrogate has no UTF-8 form (`pg`
 * would send U+FFFD for it, so `'\uD800'` and `'\uD801'` would be one record): its UTF-16 code units are hashed.
 * @example
 * await query(sql.watermark, [recordKey(key)]);
 */
export const recordKey = (key: string): string => {
  if (LONE_SURROGATE.test(key))
    return `sha256-utf16:${createHash('sha256').update(Buffer.from(key, 'utf16le')).digest('hex')}`;
  return key.length <= 600 && !key.includes('\u0000') && !key.startsWith('sha256')
    ? key
    : `sha256:${createHash('sha256').update(key).digest('hex')}`;
};

/**
 * The statements of the ordering table `t` (quoted), beside the dedupe table; `lockTimeoutMs` bounds, on the server,
 * each statement's wait for a row another transaction holds.
 * @example
 * const sql = orderingStatements('"workforce_webhook_events_ordering"', 2000);
 * await pool.query(sql.watermark, [recordKey(key)]);
 */
export function orderingStatements(
  t: string,
  lockTimeoutMs: number,
): {
  readonly migrate: readonly string[];
  readonly enter: string;
  readonly hold: string;
  readonly leave: string;
  readonly watermark: string;
  readonly renew: string;
  readonly retract: string;
  readonly cleanup: string;
} {
  const ms = msFromNow;
  // Every statement that may wait for a row lock sets lock_timeout for itself in FROM (a function there runs before
  // the row is locked): the server gives up the wait when the client does, instead of holding a connection that
  // waits as long as the transaction holding the row stays open.
  const bounded = `${boundLockWait(lockTimeoutMs)} AS bound`;
  // An owner's row is kept LAPSED_KEPT_MS past its lease or hold (`lease_until`), for its retries.
  const kept = (leaseUntil: string): string =>
    `${leaseUntil} >= now() - ${LAPSED_KEPT_MS} * interval '1 millisecond'`;
  // The stored form of a run names its owner (its length first, so no owner's form is another's prefix). A version
  // before runs, taking the key for another owner, leaves the previous owner's run on the row: a run stored for
  // another owner than the row's is no run (a hold), not a live lease of the new owner.
  const runOf = (owner: string, run: string): string =>
    `(octet_length(${owner}::text) || ':' || ${owner}::text || ${run}::text)`;
  // The row's run is a run of the row's owner (a live lease of it, when the lease is live).
  const hasRun = (row: string): string => {
    const prefix = `(octet_length(${row}.owner) || ':' || ${row}.owner)`;
    return `COALESCE(left(${row}.run, length(${prefix})) = ${prefix}, false)`;
  };
  // The row's lease is the owner's ($2) and, with a run ($5), that run's.
  const mine = (row: string): string =>
    `${row}.owner = $2 AND ($5::text IS NULL OR ${row}.run = ${runOf('$2', '$5')})`;
  // Marks compare byte-wise (COLLATE "C"), as everywhere else, whatever the database's collation.
  const newer = `excluded.mark IS NOT NULL AND (r.mark IS NULL OR r.mark_until < now()
    OR excluded.mark COLLATE "C" > r.mark COLLATE "C")`;
  return {
    migrate: [
      `CREATE TABLE IF NOT EXISTS ${t} (
        record_key text PRIMARY KEY,
        owner text,
        run text,
        since timestamptz NOT NULL,
        lease_until timestamptz,
        mark text,
        mark_until timestamptz
      )`,
      // A table made by an earlier version gets `run` (NULL: a hold, or entered without a run). Looked up first, so
      // a table that has it (every start after this one) takes no ALTER TABLE's exclusive lock.
      `DO $$ BEGIN
        IF NOT EXISTS (SELECT 1 FROM pg_attribute
          WHERE attrelid = '${t}'::regclass AND attname = 'run' AND NOT attisdropped) THEN
          ALTER TABLE ${t} ADD COLUMN IF NOT EXISTS run text;
        END IF;
      END $$`,
    ],
    // Taken when free, lapsed or already the owner's (who keeps `since` for LAPSED_KEPT_MS past its lease or hold,
    // as the cleanup does), unless another run of the owner has a live lease (its handlers still run); without a run
    // ($4 NULL) the owner's call renews whatever run has it. The watermark is the taken row's: the statement's
    // snapshot predates a leave that committed while this statement waited for its row (another instance's newer
    // event), and read from it an older event would take the key without that event's watermark, and run over it.
    enter: `WITH taken AS (
        INSERT INTO ${t} AS r (record_key, owner, run, since, lease_until)
        SELECT $1, $2, ${runOf('$2', '$4')}, now(), ${ms('$3')} FROM ${bounded}
        ON CONFLICT (record_key) DO UPDATE SET
          since = CASE WHEN r.owner = excluded.owner AND ${kept('r.lease_until')} THEN r.since ELSE now() END,
          run = CASE WHEN excluded.run IS NULL AND r.owner = excluded.owner THEN r.run ELSE excluded.run END,
          owner = excluded.owner, lease_until = excluded.lease_until
        WHERE r.owner IS NULL OR r.lease_until < now() OR (r.owner = excluded.owner
          AND (excluded.run IS NULL OR NOT ${hasRun('r')} OR r.run = excluded.run))
        RETURNING CASE WHEN r.mark_until >= now() THEN r.mark END AS mark
      )
      SELECT EXISTS (SELECT 1 FROM taken) AS entered, (SELECT mark FROM taken) AS watermark,
        (SELECT ceil(extract(epoch FROM (lease_until - now())) * 1000) FROM ${t} WHERE record_key = $1) AS retry_ms`,
    // Idle (no run has it) until `maxWaitMs` after the owner first entered; with a run ($4), only that run's lease.
    hold: `UPDATE ${t} SET lease_until = since + $3 * interval '1 millisecond', run = NULL FROM ${bounded}
      WHERE record_key = $1 AND owner = $2 AND ($4::text IS NULL OR run = ${runOf('$2', '$4')}) RETURNING 1`,
    // Compare-and-set of the watermark and the owner's lease (with a run, $5: that run's) given up, in one statement
    // on one row (decided on the row's latest version); `had` reports the owner as of the statement's snapshot.
    leave: `WITH old AS (SELECT owner, run FROM ${t} WHERE record_key = $1)
      INSERT INTO ${t} AS r (record_key, since, mark, mark_until)
      SELECT $1, now(), $3::text, CASE WHEN $3::text IS NULL THEN NULL ELSE ${ms('$4')} END FROM ${bounded}
      ON CONFLICT (record_key) DO UPDATE SET
        mark = CASE WHEN ${newer} THEN excluded.mark ELSE r.mark END,
        mark_until = CASE WHEN ${newer} THEN excluded.mark_until ELSE r.mark_until END,
        owner = CASE WHEN ${mine('r')} THEN NULL ELSE r.owner END,
        run = CASE WHEN ${mine('r')} THEN NULL ELSE r.run END
      RETURNING COALESCE((SELECT ${mine('old')} FROM old), false) AS had`,
    watermark: `SELECT mark FROM ${t} WHERE record_key = $1 AND mark_until >= now()`,
    // The lease of the owner's run ($4) extended only while that run has it: live, or lapsed and not taken (the row
    // kept, as for `enter`); never a hold (no run), a free key or another run's lease.
    renew: `UPDATE ${t} SET lease_until = ${ms('$3')} FROM ${bounded}
      WHERE record_key = $1 AND owner = $2 AND run = ${runOf('$2', '$4')} AND ${kept('lease_until')} RETURNING 1`,
    // The owner's lease given up, as `leave` without a mark, when its run ($3) has it: an entry whose answer never came.
    // A row another transaction holds is skipped, not waited for (tried again later): nothing waits on the server.
    retract: `UPDATE ${t} SET owner = NULL, run = NULL WHERE record_key IN (
        SELECT record_key FROM ${t} WHERE record_key = $1 AND owner = $2 AND run = ${runOf('$2', '$3')}
        FOR UPDATE SKIP LOCKED
      )`,
    // A row is gone once its watermark ended and its owner left, or never came back for LAPSED_KEPT_MS past its
    // lease or hold: until then a failing event's retry keeps `since`, the start of its maxWaitMs bound.
    cleanup: `DELETE FROM ${t} WHERE record_key IN (
        SELECT record_key FROM ${t}
        WHERE (mark_until IS NULL OR mark_until < now())
          AND (owner IS NULL OR NOT ${kept('lease_until')})
        LIMIT 500 FOR UPDATE SKIP LOCKED
      )`,
  };
}

// How many unanswered entries are given up at once (see `createRetractions`).
const LEFT_MAX = 1000;

/**
 * The ordering half of `createPostgresStore`, on its deadline-bound `query`; `retryMs` (its deadline) paces the
 * leaving of entries whose answer never came, till `close()`.
 * @example
 * const sql = orderingStatements('"workforce_webhook_events_ordering"', 2000);
 * const ordering = createPostgresOrdering({ query, sql, retryMs: 2000 });
 */
export function createPostgresOrdering({
  query,
  sql,
  retryMs,
}: {
  readonly query: <R extends QueryResultRow>(text: string, values: unknown[]) => Promise<R[]>;
  readonly sql: ReturnType<typeof orderingStatements>;
  readonly retryMs: number;
}): OrderingStore & { close(): void } {
  const ms = (value: number): number => Math.max(1, Math.ceil(value));
  // Entries a paused server ran after the store gave up on them: the key leased to a run that will never run (never
  // used again: the attempt failed), so no other event of the record could enter till that lease lapsed. That run
  // gives the key up.
  const unanswered = createRetractions<readonly [key: string, owner: string, run: string]>(
    (entries) =>
      Promise.all(entries.map(([key, owner, run]) => query(sql.retract, [recordKey(key), owner, run]))),
    retryMs,
    LEFT_MAX,
  );
  return {
    close: () => unanswered.close(),
    async enter(key, owner, leaseMs, run) {
      let row: { entered: boolean; watermark: string | null; retry_ms: string | null } | undefined;
      try {
        [row] = await query<NonNullable<typeof row>>(sql.enter, [
          recordKey(key),
          owner,
          ms(leaseMs),
          run ?? null,
        ]);
      } catch (error) {
        // Without a run, a leave would give up whatever run of the owner has the key.
        if (run !== undefined) unanswered.add(run, [key, owner, run], leaseMs, error);
        throw error;
      }
      if (row?.entered) return { status: 'entered', watermark: row.watermark ?? undefined };
      return { status: 'busy', retryInMs: Math.max(1, Number(row?.retry_ms ?? 1)) };
    },
    hold: async (key, owner, maxWaitMs, run) =>
      (await query(sql.hold, [recordKey(key), owner, ms(maxWaitMs), run ?? null])).length === 1,
    async leave(key, owner, mark, ttlMs, run) {
      const [row] = await query<{ had: boolean }>(sql.leave, [
        recordKey(key),
        owner,
        mark ?? null,
        ms(ttlMs),
        run ?? null,
      ]);
      return row?.had === true;
    },
    async watermark(key) {
      const [row] = await query<{ mark: string }>(sql.watermark, [recordKey(key)]);
      return row?.mark;
    },
    renew: async (key, owner, run, leaseMs) =>
      (await query(sql.renew, [recordKey(key), owner, ms(leaseMs), run])).length === 1,
  };
}
