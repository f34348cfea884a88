// The Postgres dedupe store: one shared claim per event id across every receiver instance, in one table of the user's database.
import { createHash } from 'node:crypto';
import type { Pool, PoolClient, QueryResult, QueryResultRow } from 'pg';
import { withDeadline } from '../src/deadline.js';
import { ConfigurationError, WebhookError } from '../src/errors.js';
import { DEFAULT_DONE_TTL_MS, type DedupeStore } from '../src/store.js';
import type { EventTransaction } from '../src/transaction.js';
import { createPostgresOrdering, msFromNow, orderingStatements, recordKey } from './postgres-ordering.js';

declare module '../src/transaction.js' {
  /** With this store, `ctx.transaction()` resolves with a `pg` client inside `BEGIN`. */
  interface HandlerTransaction extends PoolClient {}
}

/** Options of `createPostgresStore`. */
export interface PostgresStoreOptions {
  /**
   * Your `pg` pool; the store never ends it. Give it an `error` listener (`pool.on('error', ...)`): an idle
   * connection that Postgres drops (a restart) is reported there, and an unheard `error` ends the process.
   */
  readonly pool: Pool;
  /** The table, optionally with its schema (`app.webhook_events`). Default `workforce_webhook_events`. */
  readonly table?: string;
  /** How long a done id is remembered when `complete` is given no TTL of its own. Default 72 h. */
  readonly doneTtlMs?: number;
  /** Lease used when `claim` is given none. Default 30 000 (the receiver passes its own `leaseMs`). */
  readonly leaseMs?: number;
  /**
   * Every store call fails after this long, connecting included, so deliveries get 503 in time (`migrate` and
   * `cleanup`: each of their statements). Default 2000.
   */
  readonly timeoutMs?: number;
  /** How often expired rows are deleted, in batches that skip locked rows; 0 turns it off. Default 60 000. */
  readonly cleanupIntervalMs?: number;
}

/** The Postgres dedupe store, with its table's migration and cleanup. */
export interface PostgresStore extends DedupeStore {
  /**
   * Opens an attempt's transaction for `ctx.transaction()`: the receiver calls it, on a handler's first ask, with
   * the attempt's signal. A wait for another attempt at the event lasts `timeoutMs` at a time, tried again until
   * `signal` aborts (then it rejects with the signal's reason); with no signal, the first such wait fails the call.
   */
  begin(eventId: string, signal?: AbortSignal): Promise<EventTransaction | 'committed'>;
  /**
   * Creates the table, its index and the ordering table when missing; safe to run on every start and from several
   * instances at once.
   */
  migrate(): Promise<void>;
  /** Deletes expired claims and done ids, a batch at a time, never waiting on a row a delivery holds; resolves with the count. */
  cleanup(): Promise<number>;
  /** Stops the periodic cleanup (the pool stays yours). */
  close(): void;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
const NAME_MAX = 63;
const CLEANUP_BATCH = 500;
// lock_timeout is an int of milliseconds on the server.
const LOCK_TIMEOUT_MAX = 2 ** 31 - 1;
// SQLSTATE lock_not_available: a wait bounded by lock_timeout ran out.
const LOCK_NOT_AVAILABLE = '55P03';

// A name the store makes from the table's (`<table>_expires_at`, `<table>_ordering`), within Postgres's 63
// characters. Up to 54 characters (the longest whose ordering table fitted before) it is the name the store always
// made, cut at 63 as Postgres cut it, so existing indexes and tables keep theirs; past that, a hash of the whole
// name after a cut keeps two long names apart.
function derivedName(name: string, suffix: string): string {
  if (name.length <= NAME_MAX - '_ordering'.length) return `${name}${suffix}`.slice(0, NAME_MAX);
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 8);
  return `${name.slice(0, NAME_MAX - suffix.length - hash.length - 1)}_${hash}${suffix}`;
}

// `schema.table` or `table`, each part checked and quoted (the names go into SQL text, never as parameters), with
// the names of its index and of its ordering table, in the same schema.
function tableNames(table: string): {
  readonly table: string;
  readonly index: string;
  readonly ordering: string;
} {
  const parts = table.split('.');
  if (parts.length > 2 || !parts.every((part) => NAME.test(part)))
    throw new ConfigurationError(
      `Postgres store table must be a name or schema.name of letters, digits and underscores, at most 63 characters each, not ${JSON.stringify(table)}`,
    );
  const name = parts.at(-1)!;
  const schema = parts.length === 2 ? `"${parts[0]}".` : '';
  return {
    table: `${schema}"${name}"`,
    index: `"${derivedName(name, '_expires_at')}"`,
    ordering: `${schema}"${derivedName(name, '_ordering')}"`,
  };
}

// The statements of one table.
function storeStatements(
  t: string,
  index: string,
  lockTimeoutMs: number,
): {
  readonly migrate: readonly string[];
  readonly open: string;
  readonly claim: string;
  readonly renew: string;
  readonly complete: string;
  readonly release: string;
  readonly lock: string;
  readonly committed: string;
  readonly commit: string;
  readonly cleanup: string;
} {
  const ms = msFromNow;
  return {
    migrate: [
      // A claim holds its owner's token until done (token NULL). `committed`: a handler transaction carried the done mark.
      `CREATE TABLE IF NOT EXISTS ${t} (
        id text PRIMARY KEY,
        token text,
        expires_at timestamptz NOT NULL,
        committed boolean NOT NULL DEFAULT false
      )`,
      `CREATE INDEX IF NOT EXISTS ${index} ON ${t} (expires_at)`,
    ],
    // One statement: insert, or take over a row whose lease or done mark has passed. A row left alone is read
    // from the statement's snapshot; one committed after it (a claim racing this one) is in progress.
    claim: `WITH taken AS (
        INSERT INTO ${t} AS e (id, token, expires_at) VALUES ($1, $2, ${ms('$3')})
        ON CONFLICT (id) DO UPDATE SET token = excluded.token, expires_at = excluded.expires_at, committed = false
        WHERE e.expires_at < now()
        RETURNING 1
      )
      SELECT EXISTS (SELECT 1 FROM taken) AS claimed,
        (SELECT token IS NULL OR committed FROM ${t} WHERE id = $1) AS done`,
    // The owner keeps its lease, even one that has passed, while nobody took the id over (a take-over changes the token).
    // A row its handler transaction committed is kept as the commit left it (the dedupe window), and still answers
    // its owner: inline, a renewal that lands just after the commit is no lost lease.
    renew: `UPDATE ${t} SET expires_at = CASE WHEN committed THEN expires_at ELSE ${ms('$3')} END
      WHERE id = $1 AND token = $2 RETURNING 1`,
    // Like renew: the owner's token, even past its lease while nobody took the id, so a late done mark still lands.
    complete: `UPDATE ${t} SET token = NULL, expires_at = ${ms('$3')} WHERE id = $1 AND token = $2 RETURNING 1`,
    // A row whose handler transaction committed is done whatever happens to its claim.
    release: `DELETE FROM ${t} WHERE id = $1 AND token = $2 AND expires_at >= now() AND NOT committed RETURNING 1`,
    // One round trip: the transaction, and a bound on the server for the wait for the event's lock. The session's
    // lock_timeout is read first (a function in FROM runs before the target list), for `committed` to put back.
    open: `BEGIN; SELECT prior, set_config('lock_timeout', '${lockTimeoutMs}ms', true)
      FROM current_setting('lock_timeout') AS prior`,
    // Attempts at one event take their turns, and one that comes after a commit sees it.
    lock: `SELECT pg_advisory_xact_lock(hashtextextended('workforce-webhooks:' || $1, 0))`,
    // Once the lock is held, the handlers' statements get the session's lock_timeout back.
    committed: `SELECT (SELECT committed FROM ${t} WHERE id = $1) AS committed, set_config('lock_timeout', $2, true)`,
    // The done mark, written in the handlers' transaction: the row is done whatever becomes of its claim.
    commit: `INSERT INTO ${t} AS e (id, token, expires_at, committed) VALUES ($1, NULL, ${ms('$2')}, true)
      ON CONFLICT (id) DO UPDATE SET committed = true, expires_at = GREATEST(e.expires_at, excluded.expires_at)
      WHERE NOT e.committed
      RETURNING 1`,
    cleanup: `DELETE FROM ${t} WHERE id IN (
        SELECT id FROM ${t} WHERE expires_at < now() LIMIT ${CLEANUP_BATCH} FOR UPDATE SKIP LOCKED
      )`,
  };
}

/**
 * The dedupe store for several receiver instances on the Postgres you already run: one table (`migrate()`), one
 * `INSERT ... ON CONFLICT` statement per claim with a lease check, done ids expiring by time, a background cleanup.
 * @example
 * const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
 * const store = createPostgresStore({ pool });
 * await store.migrate();
 * createReceiver({ secret, store });
 */
export function createPostgresStore({
  pool,
  table = 'workforce_webhook_events',
  doneTtlMs = DEFAULT_DONE_TTL_MS,
  leaseMs = 30_000,
  timeoutMs = 2000,
  cleanupIntervalMs = 60_000,
}: PostgresStoreOptions): PostgresStore {
  if (pool === undefined || typeof pool.query !== 'function' || typeof pool.connect !== 'function')
    throw new ConfigurationError('createPostgresStore needs `pool`: a pg.Pool');
  for (const [name, value] of Object.entries({ doneTtlMs, leaseMs, timeoutMs })) {
    if (!Number.isFinite(value) || value <= 0)
      throw new ConfigurationError(`Postgres store ${name} must be a positive number`);
  }
  const names = tableNames(table);
  const sql = storeStatements(names.table, names.index, Math.min(Math.ceil(timeoutMs), LOCK_TIMEOUT_MAX));
  // Ordering (spec rule 4) keeps its leases and watermarks in `<table>_ordering`.
  const orderingTable = names.ordering;
  const orderingSql = orderingStatements(orderingTable);
  const claimOrdered = `${sql.claim},
    (SELECT mark FROM ${orderingTable} WHERE record_key = $4 AND mark_until >= now()) AS watermark`;
  const ms = (value: number, fallback: number): number =>
    Math.max(1, Math.ceil(Number.isFinite(value) && value > 0 ? value : fallback));

  // The caller's deadline, not the pool's good will: a full pool or a silent server fails the call in time, and
  // query_timeout has pg drop the connection of a statement that outlived it.
  const inTime = <T>(answer: Promise<T>, expired?: (pending: Promise<T>) => void): Promise<T> =>
    withDeadline(() => answer, timeoutMs, 'store_unavailable', expired);
  const run = <R extends QueryResultRow>(text: string, values: unknown[] = []): Promise<QueryResult<R>> =>
    inTime(pool.query<R>({ text, values, query_timeout: timeoutMs } as never));
  const query = <R extends QueryResultRow>(text: string, values: unknown[]): Promise<R[]> =>
    run<R>(text, values).then((result) => result.rows);

  // A client of the pool within the deadline, and `finish` to give it back once (with an error: dropped, which
  // also rolls back whatever it left open on the server); `ours` until then.
  const checkout = async (): Promise<{
    client: PoolClient;
    finish: (error?: Error) => void;
    ours: () => boolean;
  }> => {
    // A connection that comes after the deadline goes back to the pool.
    const client = await inTime(pool.connect(), (late) => {
      void late.then(
        (connection) => connection.release(),
        () => {},
      );
    });
    // A checked-out client's lost connection is emitted on the client, not the pool: with no listener it would
    // crash the process. Its next query rejects with the same error, which fails the call.
    const lost = (): void => {};
    client.on('error', lost);
    let open = true;
    const finish = (error?: Error): void => {
      if (!open) return;
      open = false;
      client.off('error', lost);
      client.release(error);
    };
    return { client, finish, ours: () => open };
  };

  // One wait for the event's turn, at most timeoutMs on the server (the client's own deadline, twice that, is for a
  // server that stopped answering): the session's lock_timeout once the turn is held, or undefined when it did not
  // come in time (the transaction is then rolled back).
  const turn = async (client: PoolClient, id: string): Promise<string | undefined> => {
    // A multi-statement query answers with one result per statement.
    const [, opened] = (await inTime(client.query(sql.open))) as unknown as QueryResult<{ prior: string }>[];
    try {
      await withDeadline(() => client.query(sql.lock, [id]), 2 * timeoutMs, 'store_unavailable');
    } catch (error) {
      if ((error as { code?: unknown })?.code !== LOCK_NOT_AVAILABLE) throw error;
      await inTime(client.query('ROLLBACK'));
      return undefined;
    }
    return opened!.rows[0]!.prior;
  };

  const begin = async (id: string, signal?: AbortSignal): Promise<EventTransaction | 'committed'> => {
    signal?.throwIfAborted();
    const { client, finish, ours } = await checkout();
    // Gives the client, its transaction rolled back, to the pool, and rejects with why begin stopped.
    const giveUp = (): never => {
      finish();
      signal?.throwIfAborted();
      throw new WebhookError(
        'store_unavailable',
        `another attempt at this event held it for over ${timeoutMs} ms`,
      );
    };
    try {
      let prior = await turn(client, id);
      // Waits again while the attempt runs; stops once it ended, or at once when there is no attempt to wait for.
      while (prior === undefined) {
        if (signal === undefined || signal.aborted) giveUp();
        prior = await turn(client, id);
      }
      const { rows } = await inTime(client.query<{ committed: boolean | null }>(sql.committed, [id, prior]));
      // An attempt that ended while its turn came leaves the event to the next.
      if (rows[0]?.committed === true || signal?.aborted) {
        await inTime(client.query('ROLLBACK'));
        if (signal?.aborted) giveUp();
        finish();
        return 'committed';
      }
    } catch (error) {
      // Unknown state (a deadline passed, the connection broke): the client is dropped. No-op after giveUp.
      finish(error as Error);
      throw error;
    }
    return {
      client,
      async commit() {
        if (!ours()) throw new WebhookError('store_unavailable', 'the transaction was already ended');
        try {
          const { rowCount } = await inTime(client.query(sql.commit, [id, doneTtlMs]));
          await inTime(client.query(rowCount === 1 ? 'COMMIT' : 'ROLLBACK'));
          finish();
          return rowCount === 1;
        } catch (error) {
          // Unknown outcome: the connection is dropped; a later attempt finds the mark if the commit made it.
          finish(error as Error);
          throw error;
        }
      },
      async rollback(abandon) {
        if (!ours()) return;
        // Dropping the connection rolls the transaction back on the server, and stray writes of a handler that
        // outlived its attempt fail instead of running outside it.
        if (abandon) return finish(new Error('workforce-webhooks: attempt abandoned'));
        try {
          await inTime(client.query('ROLLBACK'));
          finish();
        } catch (error) {
          finish(error as Error);
        }
      },
    };
  };

  let cleaning: Promise<number> | undefined;
  const cleanup = (): Promise<number> => {
    cleaning ??= (async () => {
      let deleted = 0;
      for (;;) {
        const { rowCount } = await run(sql.cleanup);
        deleted += rowCount ?? 0;
        if ((rowCount ?? 0) < CLEANUP_BATCH) break;
      }
      for (;;) {
        const { rowCount } = await run(orderingSql.cleanup);
        if ((rowCount ?? 0) < CLEANUP_BATCH) return deleted;
      }
    })().finally(() => {
      cleaning = undefined;
    });
    return cleaning;
  };
  let warned = false;
  const timer =
    cleanupIntervalMs > 0
      ? setInterval(() => {
          cleanup().then(
            () => {
              warned = false;
            },
            (error: unknown) => {
              // Once per run of failures: the next interval tries again, and deliveries never wait on it.
              if (!warned) console.warn('workforce-webhooks: Postgres store cleanup failed', error);
              warned = true;
            },
          );
        }, cleanupIntervalMs)
      : undefined;
  timer?.unref();

  return {
    async migrate() {
      const { client, finish } = await checkout();
      try {
        await inTime(client.query('BEGIN'));
        // Several instances starting at once: one creates, the others find it made.
        await inTime(client.query("SELECT pg_advisory_xact_lock(hashtext('workforce-webhooks:migrate'))"));
        for (const statement of [...sql.migrate, ...orderingSql.migrate])
          await inTime(client.query(statement));
        await inTime(client.query('COMMIT'));
        finish();
      } catch (error) {
        // Dropping the connection rolls the migration back on the server, whatever state a deadline left it in.
        finish(error as Error);
        throw error;
      }
    },
    cleanup,
    begin,
    close: () => clearInterval(timer),
    async claim(id, lease, orderingKey) {
      const token = crypto.randomUUID();
      const values = [id, token, ms(lease, leaseMs)];
      // Ordering on: the same statement reads the key's watermark.
      const [row] =
        orderingKey === undefined
          ? await query<{ claimed: boolean; done: boolean | null }>(sql.claim, values)
          : await query<{ claimed: boolean; done: boolean | null; watermark: string | null }>(claimOrdered, [
              ...values,
              recordKey(orderingKey),
            ]);
      if (row?.claimed) {
        if (orderingKey === undefined) return { status: 'claimed', token };
        return {
          status: 'claimed',
          token,
          watermark: (row as unknown as { watermark: string | null }).watermark ?? undefined,
        };
      }
      return row?.done === true ? { status: 'done' } : { status: 'in_progress' };
    },
    renew: (id, token, lease) => changes(sql.renew, [id, token, ms(lease, leaseMs)]),
    complete: (id, token, ttl) => changes(sql.complete, [id, token, ms(ttl, doneTtlMs)]),
    release: (id, token) => changes(sql.release, [id, token]),
    ordering: createPostgresOrdering({ query, sql: orderingSql }),
  };

  function changes(text: string, values: unknown[]): Promise<boolean> {
    return query(text, values).then((rows) => rows.length === 1);
  }
}
