// The Postgres dedupe store: one shared claim per event id across every receiver instance, in one table of the user's database.
import type { Pool, PoolClient } from 'pg';
import { ConfigurationError } from '../src/errors.js';
import { createConsoleLogger, type Logger } from '../src/logger.js';
import { DEFAULT_DONE_TTL_MS, type DedupeStore } from '../src/store.js';
import type { EventTransaction } from '../src/transaction.js';
import { createPostgresBegin } from './postgres-begin.js';
import { createPostgresCleanup } from './postgres-cleanup.js';
import { createPostgresMigrate } from './postgres-migrate.js';
import { tableNames } from './postgres-names.js';
import { createPostgresOrdering, orderingStatements, recordKey } from './postgres-ordering.js';
import { createBoundPool } from './postgres-pool.js';
import { createRetractions } from './postgres-retract.js';
import { storeStatements } from './postgres-statements.js';
import { assertReadableConnectionString } from './postgres-url.js';

declare module '../src/transaction.js' {
  /**
   * With this store, `ctx.transaction()` resolves with a `pg` client inside `BEGIN ISOLATION LEVEL READ COMMITTED`;
   * its `release()` does nothing (the store gives the client back when the attempt ends).
   */
  interface HandlerTransaction extends PoolClient {}
}

/** Options of `createPostgresStore`. */
export interface PostgresStoreOptions {
  /**
   * Your `pg` pool; the store never ends it. A `connectionString` pg would misread (not a URL, a password with an
   * unencoded `#`, `/` or `?`) is refused when the store is made, with the fix. Give it an `error` listener (`pool.on('error', ...)`): an idle
   * connection that Postgres drops (a restart) is reported there. The store listens too (till `close()`), so an
   * `error` no listener of yours hears never ends the process; it warns of the first, with this fix.
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
  /**
   * Where the background cleanup's failures go (a warning, once per run of them: a table `migrate()` never made,
   * a lost connection), and the warnings, once each, about a handler that ran COMMIT or ROLLBACK on
   * `ctx.transaction()` itself, about an idle connection dropped from a pool with no `error` listener of yours, and
   * about an address where Postgres never answered a call in time (with the fix, even when the receiver gave up first).
   * Default: the console, as the receiver's default logger; `silentLogger` drops them.
   */
  readonly logger?: Logger;
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
  /**
   * Deletes done ids past their window, and claims whose lease lapsed over a day ago (till then their owner may still
   * renew or complete them), a batch at a time, never waiting on a row a delivery holds; resolves with the count.
   */
  cleanup(): Promise<number>;
  /** Stops the periodic cleanup, and stops listening to the pool's `error` (the pool stays yours). */
  close(): void;
}

// lock_timeout is an int of milliseconds on the server.
const LOCK_TIMEOUT_MAX = 2 ** 31 - 1;
// SQLSTATE serialization_failure, and how many times a claim that met it is run in all.
const SERIALIZATION_FAILURE = '40001';
const CLAIM_TRIES = 3;
// How many unanswered claims are kept to give up once the server answers (see `unanswered`).
const RETRACTED_MAX = 10_000;
// The stores' own `error` listeners: a pool that two stores share has no listener of the app's for all that.
const storeListeners = new WeakSet<object>();

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
  logger = createConsoleLogger(),
}: PostgresStoreOptions): PostgresStore {
  if (pool === undefined || typeof pool.query !== 'function' || typeof pool.connect !== 'function')
    throw new ConfigurationError('createPostgresStore needs `pool`: a pg.Pool');
  for (const [name, value] of Object.entries({ doneTtlMs, leaseMs, timeoutMs })) {
    if (!Number.isFinite(value) || value <= 0)
      throw new ConfigurationError(`Postgres store ${name} must be a positive number`);
  }
  assertReadableConnectionString(pool);
  const names = tableNames(table);
  // The server gives up a wait for a row lock when the client does (timeoutMs), in every statement that may wait.
  const lockTimeoutMs = Math.min(Math.ceil(timeoutMs), LOCK_TIMEOUT_MAX);
  const sql = storeStatements(names, lockTimeoutMs);
  // Ordering (spec rule 4) keeps its leases and watermarks in `<table>_ordering`.
  const orderingSql = orderingStatements(names.ordering, lockTimeoutMs);
  const claimOrdered = `${sql.claim},
    (SELECT mark FROM ${names.ordering} WHERE record_key = $4 AND mark_until >= now()) AS watermark`;
  const ms = (value: number, fallback: number): number =>
    Math.max(1, Math.ceil(Number.isFinite(value) && value > 0 ? value : fallback));
  const bound = createBoundPool({ pool, timeoutMs, logger });
  const { query } = bound;
  const { cleanup, close } = createPostgresCleanup({
    pool: bound,
    statement: sql.cleanup,
    ordering: orderingSql.cleanup,
    intervalMs: cleanupIntervalMs,
    logger,
  });
  // An idle connection Postgres dropped (a restart, a failover, an admin's pg_terminate_backend) is emitted as
  // `error` on the pool, and an `error` nobody hears ends the process: the store hears it, and while the pool has no
  // listener of its own says so, once with the fix (later ones at debug), instead of the restart taking the app down.
  let told = false;
  const dropped = (error: Error): void => {
    if (pool.listeners('error').some((listener) => !storeListeners.has(listener))) return;
    const fields = { err: { message: error.message } };
    if (told) {
      logger.debug(fields, 'workforce-webhooks: Postgres dropped an idle connection of the pool');
      return;
    }
    told = true;
    logger.warn(
      fields,
      "workforce-webhooks: Postgres dropped an idle connection of the pool, which has no 'error' listener of its own: the store kept it from ending the process; give the pool one (pool.on('error', ...)) to hear of it yourself",
    );
  };
  // Claims a paused server ran after the store gave up on them: given up again, all in one statement.
  const unanswered = createRetractions<{ readonly id: string; readonly token: string }>(
    (claims) => query(sql.retract, [claims.map(({ id }) => id), claims.map(({ token }) => token)]),
    timeoutMs,
    RETRACTED_MAX,
  );
  const ordering = createPostgresOrdering({ query, sql: orderingSql, retryMs: timeoutMs });
  // A pool-like object that is no EventEmitter has no `error` to hear.
  const listens = typeof pool.on === 'function' && typeof pool.off === 'function';
  if (listens) {
    storeListeners.add(dropped);
    pool.on('error', dropped);
  }

  return {
    migrate: createPostgresMigrate({
      pool: bound,
      lock: sql.migrateLock,
      statements: [...sql.migrate, ...orderingSql.migrate],
      logger,
    }),
    cleanup,
    // What the receiver logs with a 503 its own deadline cut short: the fix, while Postgres never answered here.
    explain: (error: unknown) => bound.explain(error),
    begin: createPostgresBegin({ pool: bound, sql, timeoutMs, doneTtlMs, logger }),
    close() {
      close();
      unanswered.close();
      ordering.close();
      if (listens) pool.off('error', dropped);
    },
    async claim(id, lease, orderingKey) {
      const token = crypto.randomUUID();
      const lasting = ms(lease, leaseMs);
      // Ordering on: the same statement reads the key's watermark.
      const text = orderingKey === undefined ? sql.claim : claimOrdered;
      const values =
        orderingKey === undefined ? [id, token, lasting] : [id, token, lasting, recordKey(orderingKey)];
      let row: { claimed: boolean; done: boolean | null; watermark?: string | null } | undefined;
      // On a database whose default isolation is REPEATABLE READ or SERIALIZABLE, a claim racing another claim of
      // the id (copies of the event delivered at once) fails to serialize: run again, on a snapshot that sees the
      // other's row, it answers in_progress, as under READ COMMITTED, instead of failing the delivery with a 503.
      for (let tries = 1; ; tries++) {
        try {
          [row] = await query<NonNullable<typeof row>>(text, values);
          break;
        } catch (error) {
          if (tries === CLAIM_TRIES || (error as { code?: unknown })?.code !== SERIALIZATION_FAILURE) {
            unanswered.add(token, { id, token }, lasting, error);
            throw error;
          }
        }
      }
      if (row?.claimed) {
        if (orderingKey === undefined) return { status: 'claimed', token };
        return {
          status: 'claimed',
          token,
          watermark: row.watermark ?? undefined,
        };
      }
      return row?.done === true ? { status: 'done' } : { status: 'in_progress' };
    },
    renew: (id, token, lease) => changes(sql.renew, [id, token, ms(lease, leaseMs)]),
    complete: (id, token, ttl) => changes(sql.complete, [id, token, ms(ttl, doneTtlMs)]),
    release: (id, token) => changes(sql.release, [id, token]),
    ordering,
  };

  function changes(text: string, values: unknown[]): Promise<boolean> {
    return query(text, values).then((rows) => rows.length === 1);
  }
}
