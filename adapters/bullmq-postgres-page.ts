// One page of dead letters on BullMQ's Postgres backend: one indexed read of the page's rows, however many are kept.
// Internal: not a subpath of the package.
import type { Queue } from 'bullmq';
import type { CheckedDeadLetterFilter } from '../src/dead-letters.js';
import { ConfigurationError } from '../src/errors.js';
import { ADMIN_TIMEOUT_MS } from './bullmq-admin.js';
import type { JobData } from './bullmq-job.js';
import type { PgPool } from './bullmq-postgres-letter.js';
import { storedJob } from './bullmq-postgres-text.js';

/**
 * A position in the failure order: a letter's failure time (epoch milliseconds, as digits) and its job's id.
 * @example
 * const after: LetterPosition = { score: '1764000000000', id: eventId };
 */
export interface LetterPosition {
  readonly score: string;
  readonly id: string;
}

/**
 * What a page's row gives a letter: the job's fields a dead letter is made of.
 * @example
 * const letters = rows.map((row: LetterRow) => letterOf(row, keptError(row.failedReason, row.data.lastError)));
 */
export interface LetterRow {
  readonly id: string;
  readonly data: JobData;
  readonly attemptsMade: number;
  readonly finishedOn: number;
  readonly failedReason: string | undefined;
}

// A time bound as a whole millisecond the `finished_at_ms` column (a bigint, indexed) compares with as it is: a
// failure time is whole, so `>= since` is `>= ceil(since)` and `< until` is `< ceil(until)`.
const LARGEST = Number.MAX_SAFE_INTEGER;
const wholeBound = (ms: number): string => String(Math.min(LARGEST, Math.max(-LARGEST, Math.ceil(ms))));

/**
 * Reads, in one statement on the backend's index of finished jobs (`job_finished_idx`), the page of failed jobs
 * after `after` in the dead-letter order (newest first; ties of a failure time by their ids' bytes, highest first, as
 * on Redis), with the filters in the statement so a page is full while matches follow; one row more than `limit`
 * tells whether another page follows. One snapshot: letters failed, replayed or discarded meanwhile shift nothing.
 * @example
 * const { rows, more } = await readLetterRows(pool, queue, 100, after, query.type, filter);
 */
export async function readLetterRows(
  pool: PgPool,
  queue: Queue<JobData>,
  limit: number,
  after: LetterPosition | undefined,
  type: string | undefined,
  filter: CheckedDeadLetterFilter,
): Promise<{ rows: LetterRow[]; more: boolean }> {
  // PostgreSQL text holds no NUL: no job's id is such a cursor's, and no event's type such a type.
  if (after?.id.includes('\u0000'))
    throw new ConfigurationError('deadLetters cursor is not one this queue gave');
  if (
    filter.since === Number.POSITIVE_INFINITY ||
    filter.until === Number.NEGATIVE_INFINITY ||
    type?.includes('\u0000')
  )
    return { rows: [], more: false };
  const params: unknown[] = [queue.name, limit + 1];
  const param = (value: unknown): string => `$${params.push(value)}`;
  // Only this package's events: another app's job failed under this queue's name is not a letter of ours.
  const where = [
    'queue = $1',
    "state = 'failed'",
    "jsonb_typeof(data->'event'->'id') = 'string'",
    "jsonb_typeof(data->'event'->'type') = 'string'",
  ];
  if (after !== undefined) {
    const score = param(after.score);
    // The first bound alone is an index condition; the second keeps the ties after the cursor's id.
    where.push(
      `finished_at_ms <= ${score}::bigint`,
      `(finished_at_ms < ${score}::bigint OR id COLLATE "C" < ${param(after.id)})`,
    );
  }
  if (Number.isFinite(filter.since))
    where.push(`finished_at_ms >= ${param(wholeBound(filter.since))}::bigint`);
  if (Number.isFinite(filter.until))
    where.push(`finished_at_ms < ${param(wholeBound(filter.until))}::bigint`);
  if (type !== undefined)
    where.push(
      type.endsWith('.*')
        ? `starts_with(data->'event'->>'type', ${param(type.slice(0, -1))}::text)`
        : `data->'event'->>'type' = ${param(type)}::text`,
    );
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    // The planner misjudges how many rows the filters on `data` keep, and would then sort every letter after the
    // cursor: kept to the index's order (its ties sorted a group at a time), a read stops after the page's rows. The
    // server gives the read up when the caller does (`queue_unavailable`), rather than run on unanswered.
    await client.query(
      'BEGIN READ ONLY; SET LOCAL enable_bitmapscan = off; SET LOCAL enable_seqscan = off; SET LOCAL enable_sort = off;' +
        ` SET LOCAL statement_timeout = ${ADMIN_TIMEOUT_MS}`,
    );
    const { rows } = await client.query(
      'SELECT id, data, attempts_made, finished_at_ms::text AS finished, failed_reason FROM job' +
        ` WHERE ${where.join(' AND ')} ORDER BY finished_at_ms DESC, id COLLATE "C" DESC LIMIT $2`,
      params,
    );
    await client.query('COMMIT');
    return {
      rows: rows.slice(0, limit).map((row) => ({
        id: String(row.id),
        // An event Postgres could not hold as it is was kept as its exact JSON text: read back as it came.
        data: storedJob(row.data as JobData),
        attemptsMade: Number(row.attempts_made ?? 0),
        finishedOn: Number(row.finished),
        failedReason: (row.failed_reason as string | null) ?? undefined,
      })),
      more: rows.length > limit,
    };
  } catch (error) {
    broken = error instanceof Error ? error : new Error(String(error));
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    // A client whose read failed may be in any state: the pool drops it rather than hand it out again.
    client.release(broken);
  }
}
