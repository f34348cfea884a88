// A BullMQ dead letter dropped for good, only while it is the letter the operator asked for.
// Internal: not a subpath of the package.
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { EventJob, JobData } from './bullmq-job.js';
import { onLockedLetter, postgresPool } from './bullmq-postgres-letter.js';

// Drops a dead letter when it is in the failed set, with the failure time asked for when one is given: out of the set,
// its job's keys (as BullMQ's removal of a job with no parent, children or deduplication, which an event's job never
// has) and its record of success, with the 'removed' event BullMQ's removal writes. One step, so a Redis lost halfway
// never leaves a job's hash behind with no expiry (kept for ever, and a redelivery of the event added as a no-op).
const FAILED_DROP = `local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or (ARGV[2] ~= '' and tonumber(score) ~= tonumber(ARGV[2])) then return 0 end
redis.call('ZREM', KEYS[1], ARGV[1])
local job = KEYS[2]
redis.call('DEL', job, job .. ':logs', job .. ':dependencies', job .. ':processed', job .. ':failed',
  job .. ':unsuccessful', KEYS[3])
local most = tonumber(redis.call('HGET', KEYS[5], 'opts.maxLenEvents')) or 10000
redis.call('XADD', KEYS[4], 'MAXLEN', '~', most, '*', 'event', 'removed', 'jobId', ARGV[1], 'prev', 'failed')
return 1`;

/**
 * Drops the dead letter of `eventId` (with the failure time `failedAt`, when given) and its record of success; false
 * when it is not that letter (gone, replayed, or failed again since it was listed). `producer`: the queue's Redis
 * connection, ready; undefined on another backend.
 * @example
 * const dropped = await discardLetter(queue, producer, eventId, { failedAt, successKey });
 */
export async function discardLetter(
  queue: Queue<JobData>,
  producer: Redis | undefined,
  eventId: string,
  { failedAt, successKey }: { readonly failedAt: number | undefined; readonly successKey: string },
): Promise<boolean> {
  if (producer !== undefined) {
    // Only while it is in the failed set with the failure time asked for: of a discard and a replay (or two
    // discards) of one letter, only the first finds it there, so a replayed event is never removed, nor its newer
    // failure by a discard that listed the older one.
    const keys = [queue.keys.failed!, queue.toKey(eventId), successKey, queue.keys.events!, queue.keys.meta!];
    return (await producer.eval(FAILED_DROP, keys.length, ...keys, eventId, failedAt ?? '')) === 1;
  }
  // On Postgres, checked and removed in one transaction with the row locked: of a discard and a replay (or two
  // discards) of one letter, the second waits for the first and finds it gone, running, or failed again since.
  const pool = postgresPool(queue);
  if (pool !== undefined)
    return onLockedLetter(
      pool,
      queue,
      eventId,
      failedAt,
      async (query) =>
        Number((await query('SELECT remove($1, $2, false) AS n', [queue.name, eventId])).rows[0]?.n) === 1,
    );
  const job = (await queue.getJob(eventId)) as EventJob | undefined;
  if (job === undefined || !(await job.isFailed())) return false;
  // A letter that failed again since it was listed is a newer one, not the letter asked for.
  if (failedAt !== undefined && job.finishedOn !== failedAt) return false;
  // Without children: the Postgres backend's subtree removal counts a row a concurrent removal already took, so two
  // discards of one letter would both answer true; the single-row path counts what it deleted.
  return (await queue.remove(eventId, { removeChildren: false })) === 1;
}
