// An attempt's handler transaction on the Postgres store: its turn at the event (an advisory lock), then BEGIN.
import type { PoolClient, QueryResult } from 'pg';
import { withDeadline } from '../src/deadline.js';
import { WebhookError } from '../src/errors.js';
import type { EventTransaction } from '../src/transaction.js';
import type { BoundPool } from './postgres-pool.js';
import type { StoreStatements } from './postgres-statements.js';

// SQLSTATE lock_not_available: a wait bounded by lock_timeout ran out.
const LOCK_NOT_AVAILABLE = '55P03';

// A guard, not a wrapper: the handlers' client is the pool's own, its `release` shadowed by this for the checkout
// (the pool sets a fresh one at the next). The usual `finally { client.release() }` of pg code would otherwise put
// the attempt's open transaction back in the pool, for another event's claim to run inside it; the store gives the
// client back itself, once the attempt commits or rolls back.
const keptByTheStore = (): void => {};

/**
 * The store's `begin`: opens an attempt's transaction once the attempt has the event's turn, or answers
 * `'committed'` when an earlier attempt's transaction committed the event.
 * @example
 * const begin = createPostgresBegin({ pool: createBoundPool({ pool, timeoutMs }), sql, timeoutMs, doneTtlMs });
 * const tx = await begin(event.id, attempt.signal);
 */
export function createPostgresBegin({
  pool: { inTime, checkout },
  sql,
  timeoutMs,
  doneTtlMs,
}: {
  readonly pool: BoundPool;
  readonly sql: StoreStatements;
  readonly timeoutMs: number;
  readonly doneTtlMs: number;
}): (eventId: string, signal?: AbortSignal) => Promise<EventTransaction | 'committed'> {
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

  return async (id, signal) => {
    signal?.throwIfAborted();
    const { client, finish, ours } = await checkout();
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
}
