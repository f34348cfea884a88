// An attempt's handler transaction on the Postgres store: its turn at the event (an advisory lock), then BEGIN.
import type { PoolClient, QueryResult } from 'pg';
import { withDeadline } from '../src/deadline.js';
import { WebhookError } from '../src/errors.js';
import type { Logger } from '../src/logger.js';
import type { EventTransaction } from '../src/transaction.js';
import type { BoundPool, CheckedOut } from './postgres-pool.js';
import type { StoreStatements } from './postgres-statements.js';

// SQLSTATE lock_not_available: a wait bounded by lock_timeout ran out.
const LOCK_NOT_AVAILABLE = '55P03';

// SQLSTATEs of a server's timeout on an open transaction (idle_in_transaction_session_timeout; transaction_timeout,
// Postgres 17), by the setting that ended it.
const TRANSACTION_TIMEOUTS: Readonly<Record<string, string>> = {
  '25P03': 'idle_in_transaction_session_timeout',
  '25P04': 'transaction_timeout',
};

// A guard, not a wrapper: the handlers' client is the pool's own, its `release` shadowed by this for the checkout
// (the pool sets a fresh one at the next). The usual `finally { client.release() }` of pg code would otherwise put
// the attempt's open transaction back in the pool, for another event's claim to run inside it; the store gives the
// client back itself, once the attempt commits or rolls back.
const keptByTheStore = (): void => {};

// What opening the transaction reads: the session's lock_timeout and statement_timeout, and the backend's pid.
interface Opened {
  readonly prior: string;
  readonly priorStatement: string;
  readonly pid: number;
}

// The protocol's transaction status after the client's last statement ('I': no transaction open); an older pg
// without the getter answers undefined, and then nothing is said.
const status = (client: PoolClient): string | null | undefined =>
  (client as Partial<Pick<PoolClient, 'getTransactionStatus'>>).getTransactionStatus?.();

/**
 * The store's `begin`: opens an attempt's transaction once the attempt has the event's turn, or answers
 * `'committed'` when an earlier attempt's transaction committed the event.
 * @example
 * const begin = createPostgresBegin({ pool: createBoundPool({ pool, timeoutMs }), sql, timeoutMs, doneTtlMs, logger });
 * const tx = await begin(event.id, attempt.signal);
 */
export function createPostgresBegin({
  pool: { inTime, checkout, run, explain },
  sql,
  timeoutMs,
  doneTtlMs,
  logger,
}: {
  readonly pool: BoundPool;
  readonly sql: StoreStatements;
  readonly timeoutMs: number;
  readonly doneTtlMs: number;
  readonly logger: Logger;
}): (eventId: string, signal?: AbortSignal) => Promise<EventTransaction | 'committed'> {
  // A server running a statement does not look at its client's socket: a statement still running when its attempt
  // drops the connection (a handler's slow query or wait for an app's lock, one a failed handler left in flight ahead
  // of the ROLLBACK) would run on, holding the event's turn (every retry waiting on it) and the handler's rows.
  // Cancelled (the pool's role may cancel its own sessions), it fails, and the server, finding the connection gone,
  // rolls the transaction back. Sent before the drop, while the session is surely still the attempt's; a full pool
  // gets room for it from the drop. With no pid (the transaction never opened), the only wait is bounded there; an
  // error the server answered with (a DatabaseError, with its severity) left nothing running.
  const drop = (
    { finish, lost }: Pick<CheckedOut, 'finish' | 'lost'>,
    pid: number | undefined,
    error: Error,
  ): void => {
    if (pid !== undefined && (error as { severity?: unknown }).severity === undefined)
      void run('SELECT pg_cancel_backend($1)', [pid]).catch(() => {});
    endedByServer(lost());
    finish(error);
  };
  // A server whose timeout on open transactions is shorter than a handler's pause in ctx.transaction() (a slow API
  // call between its queries) ends the transaction under every attempt of such an event, which then fails with pg's
  // "not queryable" alone, till its attempts run out: said once, with the fix.
  let timedOut = false;
  const endedByServer = (lost: Error | undefined): void => {
    const setting = TRANSACTION_TIMEOUTS[String((lost as { code?: unknown } | undefined)?.code)];
    if (setting === undefined || timedOut) return;
    timedOut = true;
    logger.warn(
      { err: { message: lost!.message } },
      `workforce-webhooks: Postgres ended an event's transaction while its handlers ran (${setting}: ${lost!.message}), so such an event fails on every attempt; ctx.transaction() stays open till the handlers end: set ${setting} longer than they take, for the store's role (ALTER ROLE <user> SET ${setting} = '5min'), or do the slow work before ctx.transaction()`,
    );
  };
  // A handler that ran COMMIT or ROLLBACK itself (pg code ported as it was) ended the transaction: its writes were
  // committed (or undone) apart from the done mark, which a crash in between turns into a second run of them. The
  // mark still lands (the handlers succeeded); the mistake is a first-hour one, said once with its fix.
  let warned = false;
  const endedByHandler = (id: string): void => {
    if (warned) return;
    warned = true;
    logger.warn(
      { eventId: id },
      'workforce-webhooks: a handler ended the event transaction itself (COMMIT or ROLLBACK through ctx.transaction()), so its writes did not commit with the done mark and are not exactly once; run neither: the receiver commits once every handler succeeded, and rolls back when one throws',
    );
  };

  // One wait for the event's turn, at most timeoutMs on the server (the client's own deadline, twice that, is for a
  // server that stopped answering): the session's lock_timeout and backend pid once the turn is held, or undefined
  // when it did not come in time (the transaction is then rolled back).
  const turn = async (client: PoolClient, id: string): Promise<Opened | undefined> => {
    // A multi-statement query answers with one result per statement.
    const [, opened] = (await inTime(client.query(sql.open))) as unknown as QueryResult<Opened>[];
    try {
      await withDeadline(() => client.query(sql.lock, [id]), 2 * timeoutMs, 'store_unavailable');
    } catch (error) {
      if ((error as { code?: unknown })?.code !== LOCK_NOT_AVAILABLE) throw error;
      await inTime(client.query('ROLLBACK'));
      return undefined;
    }
    return opened!.rows[0]!;
  };

  return async (id, signal) => {
    signal?.throwIfAborted();
    const checkedOut = await checkout();
    const { client, finish, ours } = checkedOut;
    client.release = keptByTheStore;
    // Gives the client, its transaction rolled back, to the pool, and rejects with why begin stopped.
    const giveUp = (): never => {
      finish();
      signal?.throwIfAborted();
      throw new WebhookError(
        'store_unavailable',
        `another attempt at this event held it for over ${timeoutMs} ms`,
      );
    };
    let session: Opened | undefined;
    try {
      session = await turn(client, id);
      // Waits again while the attempt runs; stops once it ended, or at once when there is no attempt to wait for.
      while (session === undefined) {
        if (signal === undefined || signal.aborted) giveUp();
        session = await turn(client, id);
      }
      const { rows } = await inTime(
        client.query<{ committed: boolean | null }>(sql.committed, [
          id,
          session.prior,
          session.priorStatement,
        ]),
      );
      // An attempt that ended while its turn came leaves the event to the next.
      if (rows[0]?.committed === true || signal?.aborted) {
        await inTime(client.query('ROLLBACK'));
        if (signal?.aborted) giveUp();
        finish();
        return 'committed';
      }
    } catch (error) {
      // Unknown state (a deadline passed, the connection broke): the client is dropped. No-op after giveUp.
      if (ours()) drop(checkedOut, session?.pid, error as Error);
      throw explain(error);
    }
    const { pid } = session;
    return {
      client,
      async commit() {
        if (!ours()) throw new WebhookError('store_unavailable', 'the transaction was already ended');
        if (status(client) === 'I') endedByHandler(id);
        try {
          const { rowCount } = await inTime(client.query(sql.commit, [id, doneTtlMs]));
          await inTime(client.query(rowCount === 1 ? 'COMMIT' : 'ROLLBACK'));
          finish();
          return rowCount === 1;
        } catch (error) {
          // Unknown outcome: the connection is dropped; a later attempt finds the mark if the commit made it.
          drop(checkedOut, pid, error as Error);
          throw error;
        }
      },
      async rollback(abandon) {
        if (!ours()) return;
        // Dropping the connection rolls the transaction back on the server, and stray writes of a handler that
        // outlived its attempt fail instead of running outside it.
        if (abandon) return drop(checkedOut, pid, new Error('workforce-webhooks: attempt abandoned'));
        try {
          await inTime(client.query('ROLLBACK'));
          finish();
        } catch (error) {
          drop(checkedOut, pid, error as Error);
        }
      },
    };
  };
}
