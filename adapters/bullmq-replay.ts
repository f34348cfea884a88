// A BullMQ dead letter run again: on Redis checked and reset in one script, before BullMQ retries it.
// Internal: not a subpath of the package.
import { ErrorCode, type Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { type EventJob, isEventData, type JobData } from './bullmq-dead-letters.js';
import { runScript, script } from './redis-script.js';

// KEYS: the failed set, the job's hash, its record of success. ARGV: the job id, the failure time asked for (or ''),
// the reset data and opts. Only a letter still in the failed set (with that failure time) is reset: a replay that
// another one beat finds it gone (running) or failed again at a later time, and writes nothing over that run. The
// fields are BullMQ's own: `data` and `opts` as its jobs store them (the worker reads `opts.attempts` from the hash
// when it fetches the job), `stc` its stall counter, which its retry keeps and its stalled check compares with
// `maxStalledCount`. `atm` and `ats` are left to the retry, which resets them.
const RESET = script(`local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or (ARGV[2] ~= '' and tonumber(score) ~= tonumber(ARGV[2])) then return 0 end
if redis.call('EXISTS', KEYS[2]) == 0 then return 0 end
redis.call('HSET', KEYS[2], 'data', ARGV[3], 'opts', ARGV[4])
redis.call('HDEL', KEYS[2], 'stc')
redis.call('DEL', KEYS[3])
return 1`);

/**
 * A dead letter's data as it runs again, from its first attempt: only the event, its delivery and its trace link go
 * on (no handler done, no attempt made, no failure kept).
 * @example
 * await job.updateData(replayData(job.data));
 */
export function replayData({ event, deliveryId, trace }: JobData): JobData {
  return trace === undefined ? { event, deliveryId } : { event, deliveryId, trace };
}

/**
 * Resets a dead letter to run as a new job would, atomically and only while it is in the failed set with the failure
 * time asked for: only the event, its delivery and its trace link go on, with all the attempts it was accepted with,
 * no stall counted and no success recorded. False when it is not that letter (gone, running, or failed again since).
 * @example
 * if (await resetForReplay(producer, queue, job, { failedAt, successKey })) await job.retry('failed');
 */
async function resetForReplay(
  client: Redis,
  queue: Queue<JobData>,
  job: EventJob,
  { failedAt, successKey }: { readonly failedAt?: number; readonly successKey: string },
): Promise<boolean> {
  const data = replayData(job.data);
  const attemptsMade = job.data.attemptsMade ?? 0;
  // The attempts it was accepted with: `enqueue` gave the job those an inline run had left. Counted from the job, not
  // from this queue's options: the queue replaying it may not be the app's (the dead-letters command makes its own).
  const attempts = Math.max(1, (job.opts.attempts ?? 1) + attemptsMade);
  // The opts read with the job: the score check makes them this letter's. Our jobs set no option BullMQ stores
  // under a short name, so they are written back as read.
  const opts = { ...job.opts, attempts };
  const keys = [queue.keys.failed!, queue.toKey(job.id!), successKey];
  const args = [job.id!, failedAt ?? '', JSON.stringify(data), JSON.stringify(opts)];
  return (await runScript(client, RESET, keys, args)) === 1;
}

/**
 * Queues the dead letter of `eventId` again (with the failure time `failedAt`, when given) to run as a new job
 * would; false when it is not that letter (gone, running, or failed again since it was listed) or another replay took
 * it first. `producer`: the queue's Redis connection, ready; undefined on another backend.
 * @example
 * const replayed = await replayLetter(queue, producer, eventId, { failedAt, successKey });
 */
export async function replayLetter(
  queue: Queue<JobData>,
  producer: Redis | undefined,
  eventId: string,
  { failedAt, successKey }: { readonly failedAt: number | undefined; readonly successKey: string },
): Promise<boolean> {
  const job = (await queue.getJob(eventId)) as EventJob | undefined;
  // Another app's job failed on this queue is not a letter of ours to run.
  if (job === undefined || !isEventData(job.data)) return false;
  if (producer !== undefined) {
    // Checked and reset in one script, only while it is still this failure: a replay that another one beat (or a
    // stale `failedAt`) writes nothing over the run that won, and the letter runs as a new job would.
    if (!(await resetForReplay(producer, queue, job, { failedAt, successKey }))) return false;
  } else {
    if (!(await job.isFailed())) return false;
    // A letter that failed again since it was listed is a newer one, not the letter asked for.
    if (failedAt !== undefined && job.finishedOn !== failedAt) return false;
    await job.updateData(replayData(job.data));
  }
  try {
    // Atomic in Redis: of concurrent replays, only the first finds the job failed and moves it back.
    await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
  } catch (error) {
    // The job is gone, or no longer failed: another replay (or a discard) took it first.
    const code = (error as { code?: unknown })?.code;
    if (code === ErrorCode.JobNotExist || code === ErrorCode.JobNotInState) return false;
    throw error;
  }
  return true;
}
