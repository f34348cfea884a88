// A job's row of BullMQ's Postgres backend acted on only under a lock: a dead letter in one transaction with its row
// locked (a replay or a discard racing another finds what the first did), a running job's data under its attempt's
// lock token, as the Redis scripts do in one step. Internal: not a subpath of the package.
import type { Queue } from 'bullmq';
import { WebhookError } from '../src/errors.js';
import { ADMIN_TIMEOUT_MS } from './bullmq-admin.js';
import type { EventJob, JobData } from './bullmq-job.js';
import { storableJson } from './bullmq-postgres-text.js';

// The server's own bound on the transaction's waits for a lock, and on each of its statements: half the call's
// deadline, so that a letter another session holds past it fails the call on the server first, rolled back, instead
// of the call answering `queue_unavailable` at its deadline while its transaction still waits, to replay or discard
// the letter whenever the other session lets go.
const LETTER_LOCK_MS = ADMIN_TIMEOUT_MS / 2;
const BEGIN = `BEGIN; SET LOCAL lock_timeout = ${LETTER_LOCK_MS}; SET LOCAL statement_timeout = ${LETTER_LOCK_MS}`;
// SQLSTATE lock_not_available (lock_timeout) and query_canceled (statement_timeout).
const GAVE_UP = new Set(['55P03', '57014']);

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
 * row, then finds what the first did. False, with nothing done, when it is not that letter; `queue_unavailable`, with
 * nothing done, when the row or a statement waited past half the admin call's deadline. The queue's rows are
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
    await client.query(BEGIN);
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
    if (GAVE_UP.has((error as { code?: unknown })?.code as string))
      throw new WebhookError(
        'queue_unavailable',
        `another session held the dead letter's row in Postgres past ${LETTER_LOCK_MS} ms: nothing was done; try again`,
        { cause: error },
      );
    throw error;
  } finally {
    // A client whose transaction failed may be in any state: the pool drops it rather than hand it out again.
    client.release(broken);
  }
}

// Writes a running job's data while the attempt's token still holds it ($1 queue, $2 id, $3 data, $4 token). On this
// backend a lock that lapsed keeps its token till another attempt takes the job (a new token) or a stalled check
// sends it back to waiting (none), so the token alone tells the attempt that may write, as the lock and the active
// list do on Redis.
const WRITE_UNDER_LOCK =
  "UPDATE job SET data = $3::jsonb WHERE queue = $1 AND id = $2 AND state = 'active' AND lock_token = $4 RETURNING id";

/**
 * Writes a running job's data on BullMQ's Postgres backend only while the attempt holding `token` still holds the job,
 * so an older attempt, cut by a lost lock, never overwrites what the attempt that took the job over recorded: true
 * when written, false when not that attempt's, undefined on another backend.
 * @example
 * const written = await writeDataUnderLock(job, token, { ...job.data, completed: [0] });
 */
export async function writeDataUnderLock(
  job: EventJob,
  token: string,
  data: JobData,
): Promise<boolean | undefined> {
  const backend = postgresBackend(job);
  if (backend === undefined) return undefined;
  // A failure's class holding a NUL (jsonb refuses it) is recorded made storable, not failing the attempt's record.
  const { rows } = await backend.query(WRITE_UNDER_LOCK, [job.queueName, job.id, storableJson(data), token]);
  return rows.length === 1;
}

/**
 * True when `job` was fetched by a worker on BullMQ's Postgres backend.
 * @example
 * throw onPostgres(job) ? storableError(error) : error;
 */
export function onPostgres(job: EventJob): boolean {
  return postgresBackend(job) !== undefined;
}

// The worker that fetched the job (`Job.queue`, protected in BullMQ's types), and its backend when it is the Postgres
// one: it has a pool and runs its SQL through `query`, which waits for the schema and never settles once it is closing.
function postgresBackend(job: EventJob): { query: Query } | undefined {
  const { queue } = job as unknown as {
    readonly queue: {
      readonly backend?: { readonly connection?: { readonly pool?: Partial<PgPool> }; query?: Query };
    };
  };
  const backend = queue.backend;
  if (typeof backend?.connection?.pool?.connect !== 'function' || typeof backend.query !== 'function')
    return undefined;
  return backend as { query: Query };
}
