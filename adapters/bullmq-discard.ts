// A BullMQ dead letter dropped for good, only while it is the letter the operator asked for.
// Internal: not a subpath of the package.
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { EventJob, JobData } from './bullmq-dead-letters.js';
import { onLockedLetter, postgresPool } from './bullmq-postgres-letter.js';

// Drops a dead letter from the failed set when it is there, with the failure time asked for when one is given.
const FAILED_TAKE = `local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or (ARGV[2] ~= '' and tonumber(score) ~= tonumber(ARGV[2])) then return 0 end
return redis.call('ZREM', KEYS[1], ARGV[1])`;

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
    // Taken out of the failed set first, atomically and only with the failure time asked for: of a discard and a
    // replay (or two discards) of one letter, only the first finds it there, so a replayed event is never removed,
    // nor its newer failure by a discard that listed the older one.
    const taken = await producer.eval(FAILED_TAKE, 1, queue.keys.failed!, eventId, failedAt ?? '');
    if (taken !== 1) return false;
    await queue.remove(eventId);
    await producer.del(successKey);
    return true;
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
