// The user's pg pool behind the caller's deadline: queries and checked-out clients that fail in time, never hang.
import type { Pool, PoolClient, QueryResult, QueryResultRow } from 'pg';
import { withDeadline } from '../src/deadline.js';
import { WebhookError } from '../src/errors.js';
import type { Logger } from '../src/logger.js';
import { explained, POOL_WAIT_TIMEOUT } from './postgres-explained.js';
import { poolDiagnosis } from './postgres-pool-diagnosis.js';

/** A client of the pool, and `finish` to give it back once (whatever became of `client.release`); `ours` till then. */
export interface CheckedOut {
  readonly client: PoolClient;
  /** Gives the client back, once; with an error it is dropped, which rolls back what it left open on the server. */
  readonly finish: (error?: Error) => void;
  readonly ours: () => boolean;
  /** The error the server closed the client's connection with while no query of it ran (its FATAL), if it did. */
  readonly lost: () => Error | undefined;
}

/** The calls `createBoundPool` makes, each failing with `store_unavailable` past its deadline. */
export interface BoundPool {
  /** `answer`, or a rejection once `timeoutMs` pass first; `expired` is given the answer still pending then. */
  inTime<T>(answer: Promise<T>, expired?: (pending: Promise<T>) => void): Promise<T>;
  run<R extends QueryResultRow>(text: string, values?: unknown[]): Promise<QueryResult<R>>;
  query<R extends QueryResultRow>(text: string, values: unknown[]): Promise<R[]>;
  checkout(): Promise<CheckedOut>;
  /** `explained(error)`, knowing whether this pool ever reached Postgres (a refused connection then is an outage). */
  explain(error: unknown): unknown;
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
  logger,
}: {
  readonly pool: Pool;
  readonly timeoutMs: number;
  /**
   * Where a call that waited for a connection past its deadline says why, once (see `poolDiagnosis`), and where a call
   * past its deadline on an address that never answered says the fix, once.
   */
  readonly logger?: Logger;
}): BoundPool {
  // The clients this store holds checked out (handlers' transactions, a migration), for `late` to tell a pool they
  // use up from a silent host.
  let held = 0;
  const late = logger === undefined ? undefined : poolDiagnosis(pool, logger, () => held);
  const inTime = <T>(answer: Promise<T>, expired?: (pending: Promise<T>) => void): Promise<T> =>
    withDeadline(() => answer, timeoutMs, 'store_unavailable', expired);
  // Whether Postgres ever answered: till then a refused connection is a wrong address, said with the fix.
  let reached = false;
  // A call past its deadline on an address that never answered is explained with the fix (a firewall, a wrong host),
  // but that rejection reaches nobody when the caller gave up first (the receiver's storeTimeoutMs shorter than
  // timeoutMs, which logs its 503s as a bare outage): so the fix is also said here, once.
  let toldSilent = false;
  const overdue = (): void => {
    late?.();
    if (reached || toldSilent || logger === undefined) return;
    toldSilent = true;
    const silent = new WebhookError('store_unavailable', `no answer within ${timeoutMs} ms`);
    logger.warn({}, (explained(silent, false) as Error).message);
  };
  const run = <R extends QueryResultRow>(text: string, values: unknown[] = []): Promise<QueryResult<R>> =>
    inTime(pool.query<R>({ text, values, query_timeout: timeoutMs } as never), overdue);
  const explain = (error: unknown): unknown => explained(error, reached);
  const rowsOf = <R extends QueryResultRow>(result: QueryResult<R>): R[] => {
    reached = true;
    return result.rows;
  };
  const rethrowExplained = (error: unknown): never => {
    // pg's own bound on the wait for a connection (connectionTimeoutMillis) ran out first.
    if ((error as Error | undefined)?.message === POOL_WAIT_TIMEOUT) late?.();
    throw explain(error);
  };
  const query = <R extends QueryResultRow>(text: string, values: unknown[]): Promise<R[]> =>
    run<R>(text, values).then(rowsOf, rethrowExplained);

  const checkout = async (): Promise<CheckedOut> => {
    let client: PoolClient;
    try {
      // A connection that comes after the deadline goes back to the pool.
      client = await inTime(pool.connect(), (pending) => {
        overdue();
        void pending.then(
          (connection) => connection.release(),
          () => {},
        );
      });
    } catch (error) {
      if ((error as Error | undefined)?.message === POOL_WAIT_TIMEOUT) late?.();
      throw explain(error);
    }
    reached = true;
    held++;
    // A checked-out client's lost connection is emitted on the client, not the pool: with no listener it would
    // crash the process. Its next query fails the call, with pg's "not queryable" only: the server's words (an
    // idle_in_transaction_session_timeout that ended it) are kept for the caller to say.
    let lostWith: Error | undefined;
    const lost = (error: Error): void => {
      lostWith ??= error;
    };
    client.on('error', lost);
    // The pool's release for this checkout, kept aside: what a caller does to `client.release` meanwhile (a
    // handler's transaction client has it guarded) cannot change how the client goes back.
    const release = client.release;
    let open = true;
    const finish = (error?: Error): void => {
      if (!open) return;
      open = false;
      held--;
      client.off('error', lost);
      release.call(client, error);
    };
    return { client, finish, ours: () => open, lost: () => lostWith };
  };

  return { inTime, run, query, checkout, explain };
}
