// A dead letter of BullMQ's Postgres backend acted on in one transaction with its job's row locked: a replay or a
// discard racing another finds what the first did, as the Redis scripts do in one step.
// Internal: not a subpath of the package.
import type { Queue } from 'bullmq';
import type { JobData } from './bullmq-job.js';

/**
 * What a Postgres letter's transaction needs of a `pg` pool: a client of its own.
 * @example
 * const client = await (pool as PgPool).connect();
 */
export interface PgPool {
  connect(): Promise<{
    query(text: string, params?: readonly unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
    release(error?: Error | boolean): void;
  }>;
}

/**
 * The `pg` pool of BullMQ's Postgres backend (`getBackend().connection.pool`); undefined on Redis or another backend.
 * @example
 * const pool = postgresPool(queue);
 */
export function postgresPool(queue: Queue<JobData>): PgPool | undefined {
  const backend = (queue as { getBackend?: () => unknown }).getBackend?.() as
    | { connection?: { pool?: Partial<PgPool> } }
    | undefined;
  const pool = backend?.connection?.pool;
  return typeof pool?.connect === 'function' ? (pool as PgPool) : undefined;
}

type Query = (text: string, params: readonly unknown[]) => Promise<{ rows: Record<string, unknown>[] }>;

/**
 * Runs `act` on a dead letter of BullMQ's Postgres backend in one transaction with its job's row locked, only while
 * it is failed (with the failure time `failedAt`, when given): a replay or a discard racing another waits for the
 * row, then finds what the first did. False, with nothing done, when it is not that letter. The queue's rows are
 * keyed by its name; `act` calls BullMQ's own SQL functions, as the backend does.
 * @example
 * const removed = await onLockedLetter(pool, queue, id, failedAt, async (query) =>
 *   Number((await query('SELECT remove($1, $2, false) AS n', [queue.name, id])).rows[0]?.n) === 1);
 */
export async function onLockedLetter(
  pool: PgPool,
  queue: Queue<JobData>,
  id: string,
  failedAt: number | undefined,
  act: (query: Query) => Promise<boolean>,
): Promise<boolean> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    const { rows } = await client.query(
      'SELECT state::text AS state, finished_at_ms::text AS finished FROM job WHERE queue = $1 AND id = $2 FOR UPDATE',
      [queue.name, id],
    );
    const row = rows[0];
    const letter = row?.state === 'failed' && (failedAt === undefined || Number(row.finished) === failedAt);
    const done = letter && (await act((text, params) => client.query(text, params)));
    await client.query(done ? 'COMMIT' : 'ROLLBACK');
    return done;
  } catch (error) {
    broken = error instanceof Error ? error : new Error(String(error));
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    // A client whose transaction failed may be in any state: the pool drops it rather than hand it out again.
    client.release(broken);
  }
}
