// The Postgres dedupe store: one shared claim per event id across every receiver instance, in one table of the user's database.
import type { Pool, PoolClient, QueryResultRow } from 'pg';
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
  /** Every store call fails after this long, connecting included, so deliveries get 503 in time. Default 2000. */
  readonly timeoutMs?: number;
  /** How often expired rows are deleted, in batches that skip locked rows; 0 turns it off. Default 60 000. */
  readonly cleanupIntervalMs?: number;
}

/** The Postgres dedupe store, with its table's migration and cleanup. */
export interface PostgresStore extends DedupeStore {
  /** Opens an attempt's transaction for `ctx.transaction()`: the receiver calls it, on a handler's first ask. */
  begin(eventId: string): Promise<EventTransaction | 'committed'>;
  /** Creates the table and its index when missing; safe to run on every start and from several instances at once. */
  migrate(): Promise<void>;
  /** Deletes expired claims and done ids, a batch at a time, never waiting on a row a delivery holds; resolves with the count. */
  cleanup(): Promise<number>;
  /** Stops the periodic cleanup (the pool stays yours). */
  close(): void;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
const CLEANUP_BATCH = 500;

// `schema.table` or `table`, each part checked and quoted: the name goes into SQL text, never as a parameter.
function quoteTable(table: string): { readonly table: string; readonly index: string } {
  const parts = table.split('.');
  if (parts.length > 2 || !parts.every((part) => NAME.test(part)))
    throw new ConfigurationError(
      `Postgres store table must be a name or schema.name of letters, digits and underscores, not ${JSON.stringify(table)}`,
    );
  const quoted = parts.map((part) => `"${part}"`);
  return { table: quoted.join('.'), index: `"${parts.at(-1)}_expires_at"` };
}

// The statements of one table.
function storeStatements(table: string): {
  readonly migrate: readonly string[];
  readonly claim: string;
  readonly renew: string;
  readonly complete: string;
  readonly release: string;
  readonly lock: string;
  readonly committed: string;
  readonly commit: string;
  readonly cleanup: string;
} {
  const { table: t, index } = quoteTable(table);
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
    renew: `UPDATE ${t} SET expires_at = ${ms('$3')} WHERE id = $1 AND token = $2 AND NOT committed RETURNING 1`,
    // Like renew: the owner's token, even past its lease while nobody took the id, so a late done mark still lands.
    complete: `UPDATE ${t} SET token = NULL, expires_at = ${ms('$3')} WHERE id = $1 AND token = $2 RETURNING 1`,
    // A row whose handler transaction committed is done whatever happens to its claim.
    release: `DELETE FROM ${t} WHERE id = $1 AND token = $2 AND expires_at >= now() AND NOT committed RETURNING 1`,
    // Attempts at one event take their turns, and one that comes after a commit sees it.
    lock: `SELECT pg_advisory_xact_lock(hashtextextended('workforce-webhooks:' || $1, 0))`,
    committed: `SELECT committed FROM ${t} WHERE id = $1`,
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
  const sql = storeStatements(table);
  // Ordering (spec rule 4) keeps its leases and watermarks in `<table>_ordering`.
  const orderingTable = quoteTable(`${table}_ordering`).table;
  const orderingSql = orderingStatements(orderingTable);
  const claimOrdered = `${sql.claim},
    (SELECT mark FROM ${orderingTable} WHERE record_key = $4 AND mark_until >= now()) AS watermark`;
  const ms = (value: number, fallback: number): number =>
    Math.max(1, Math.ceil(Number.isFinite(value) && value > 0 ? value : fallback));

  // The caller's deadline, not the pool's good will: a full pool or a silent server fails the call in time, and
  // query_timeout has pg drop the connection of a statement that outlived it.
  const inTime = <T>(answer: Promise<T>, expired?: (pending: Promise<T>) => void): Promise<T> =>
    withDeadline(() => answer, timeoutMs, 'store_unavailable', expired);
  const query = <R extends QueryResultRow>(text: string, values: unknown[]): Promise<R[]> =>
    inTime(pool.query<R>({ text, values, query_timeout: timeoutMs } as never)).then((result) => result.rows);

  const begin = async (id: string): Promise<EventTransaction | 'committed'> => {
    // A connection that comes after the deadline goes back to the pool.
    const client = await inTime(pool.connect(), (late) => {
      void late.then(
        (connection) => connection.release(),
        () => {},
      );
    });
    // A checked-out client's lost connection is emitted on the client, not the pool: with no listener it would
    // crash the process. Its next query rejects with the same error, which fails the attempt.
    const lost = (): void => {};
    client.on('error', lost);
    let open = true;
    const finish = (error?: Error): void => {
      if (!open) return;
      open = false;
      client.off('error', lost);
      client.release(error);
    };
    try {
      await inTime(client.query('BEGIN'));
      // Waits its turn behind another attempt at the same event (bounded by the attempt's own time limit).
      await client.query(sql.lock, [id]);
      const { rows } = await inTime(client.query<{ committed: boolean }>(sql.committed, [id]));
      if (rows[0]?.committed === true) {
        await inTime(client.query('ROLLBACK'));
        finish();
        return 'committed';
      }
    } catch (error) {
      finish(error as Error);
      throw error;
    }
    return {
      client,
      async commit() {
        if (!open) throw new WebhookError('store_unavailable', 'the transaction was already ended');
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
        if (!open) return;
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
        const { rowCount } = await pool.query(sql.cleanup);
        deleted += rowCount ?? 0;
        if ((rowCount ?? 0) < CLEANUP_BATCH) break;
      }
      for (;;) {
        const { rowCount } = await pool.query(orderingSql.cleanup);
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
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        // Several instances starting at once: one creates, the others find it made.
        await client.query("SELECT pg_advisory_xact_lock(hashtext('workforce-webhooks:migrate'))");
        for (const statement of [...sql.migrate, ...orderingSql.migrate]) await client.query(statement);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw error;
      } finally {
        client.release();
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
