// The user's pg pool behind the caller's deadline: queries and checked-out clients that fail in time, never hang.
import type { Pool, PoolClient, QueryResult, QueryResultRow } from 'pg';
import { withDeadline } from '../src/deadline.js';
import { ConfigurationError } from '../src/errors.js';

// SQLSTATE undefined_table: a statement of the store named a table that is not there.
const UNDEFINED_TABLE = '42P01';

/**
 * The error a store statement failed with, or, when the store's table is missing (`migrate()` never ran on this
 * database or schema), a `ConfigurationError` that says so with the fix, the server's error as its `cause`.
 * @example
 * const rows = await pool.query(text, values).then((result) => result.rows, (error) => { throw explained(error); });
 */
export function explained(error: unknown): unknown {
  if ((error as { code?: unknown })?.code !== UNDEFINED_TABLE) return error;
  return Object.assign(
    new ConfigurationError(
      `the Postgres store's table is missing (${(error as Error).message}): run \`await store.migrate()\` on start, or \`npx workforce-webhooks migrate --postgres $DATABASE_URL\` once`,
    ),
    { cause: error },
  );
}

const rowsOf = <R extends QueryResultRow>(result: QueryResult<R>): R[] => result.rows;
const rethrowExplained = (error: unknown): never => {
  throw explained(error);
};

/** A client of the pool, and `finish` to give it back once (whatever became of `client.release`); `ours` till then. */
export interface CheckedOut {
  readonly client: PoolClient;
  /** Gives the client back, once; with an error it is dropped, which rolls back what it left open on the server. */
  readonly finish: (error?: Error) => void;
  readonly ours: () => boolean;
}

/** The calls `createBoundPool` makes, each failing with `store_unavailable` past its deadline. */
export interface BoundPool {
  /** `answer`, or a rejection once `timeoutMs` pass first; `expired` is given the answer still pending then. */
  inTime<T>(answer: Promise<T>, expired?: (pending: Promise<T>) => void): Promise<T>;
  run<R extends QueryResultRow>(text: string, values?: unknown[]): Promise<QueryResult<R>>;
  query<R extends QueryResultRow>(text: string, values: unknown[]): Promise<R[]>;
  checkout(): Promise<CheckedOut>;
}

/**
 * The caller's deadline, not the pool's good will: a full pool or a silent server fails the call in time, and
 * query_timeout has pg drop the connection of a statement that outlived it.
 * @example
 * const { query } = createBoundPool({ pool, timeoutMs: 2000 });
 * const rows = await query('SELECT 1 AS one', []);
 */
export function createBoundPool({
  pool,
  timeoutMs,
}: {
  readonly pool: Pool;
  readonly timeoutMs: number;
}): BoundPool {
  const inTime = <T>(answer: Promise<T>, expired?: (pending: Promise<T>) => void): Promise<T> =>
    withDeadline(() => answer, timeoutMs, 'store_unavailable', expired);
  const run = <R extends QueryResultRow>(text: string, values: unknown[] = []): Promise<QueryResult<R>> =>
    inTime(pool.query<R>({ text, values, query_timeout: timeoutMs } as never));
  const query = <R extends QueryResultRow>(text: string, values: unknown[]): Promise<R[]> =>
    run<R>(text, values).then(rowsOf, rethrowExplained);

  const checkout = async (): Promise<CheckedOut> => {
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
    // The pool's release for this checkout, kept aside: what a caller does to `client.release` meanwhile (a
    // handler's transaction client has it guarded) cannot change how the client goes back.
    const release = client.release;
    let open = true;
    const finish = (error?: Error): void => {
      if (!open) return;
      open = false;
      client.off('error', lost);
      release.call(client, error);
    };
    return { client, finish, ours: () => open };
  };

  return { inTime, run, query, checkout };
}
