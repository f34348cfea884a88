// A BullMQ dead letter run again: on Redis checked and reset in one script, before BullMQ retries it.
// Internal: not a subpath of the package.
import { ErrorCode, type Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { type EventJob, isEventData, type JobData } from './bullmq-job.js';
import { onLockedLetter, type PgPool, postgresPool } from './bullmq-postgres-letter.js';
import type { StoredJobData } from './bullmq-postgres-text.js';
import { runScript, script } from './redis-script.js';

/**
 * The field of a job's hash where a replay claims the failure it reset (`<failure time>:<claimed at, ms>`), so that
 * of replays racing between their reset and BullMQ's retry (two round trips) only the one that claimed it retries.
 * @example
 * await redis.hget(queue.toKey(eventId), REPLAY_CLAIM_FIELD); // '1764000000000:1764000012345'
 */
export const REPLAY_CLAIM_FIELD = 'workforce-webhooks:replay';

// How long a claim holds off other replays of that failure. The claimant's retry is its very next command, so a
// claim older than this is one whose retry never came (its process died, its Redis connection dropped, its call
// ended at its 10 s deadline long ago): the letter is free again rather than unreplayable for good.
const CLAIM_MS = 60_000;

// KEYS: the failed set, the job's hash, its record of success. ARGV: the job id, the failure time asked for (or ''),
// the reset data and opts, the claim's lifetime. Only a letter still in the failed set (with that failure time) and
// not claimed by another replay is reset: a replay that another one beat finds it gone (running), failed again at a
// later time, or claimed, and writes nothing over that run; BullMQ's retry, which moves any failed job, is then
// sent by the claimant alone, so a newer failure is never moved by the retry of a replay that reset an older one.
// The fields are BullMQ's own: `data` and `opts` as its jobs store them (the worker reads `opts.attempts` from the
// hash when it fetches the job), `stc` its stall counter, which its retry keeps and its stalled check compares
// with `maxStalledCount`. `atm` and `ats` are left to the retry, which resets them.
const RESET = script(`local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or (ARGV[2] ~= '' and tonumber(score) ~= tonumber(ARGV[2])) then return 0 end
if redis.call('EXISTS', KEYS[2]) == 0 then return 0 end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local claim = redis.call('HGET', KEYS[2], ARGV[6])
if claim then
  local at = string.find(claim, ':', 1, true)
  if at and string.sub(claim, 1, at - 1) == score then
    if now - tonumber(string.sub(claim, at + 1)) < tonumber(ARGV[5]) then return 0 end
  end
end
redis.call('HSET', KEYS[2], 'data', ARGV[3], 'opts', ARGV[4], ARGV[6], score .. ':' .. now)
redis.call('HDEL', KEYS[2], 'stc')
redis.call('DEL', KEYS[3])
return score .. ':' .. now`);

// KEYS: the job's hash. ARGV: the claim field, the claim given back. Only that claim: a later replay's is left.
const RELEASE =
  script(`if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then return redis.call('HDEL', KEYS[1], ARGV[1]) end
return 0`);

/**
 * A dead letter's data as it runs again, from its first attempt: only the event, its delivery and its trace link go
 * on (no handler done, no attempt made, no failure kept).
 * @example
 * await job.updateData(replayData(job.data));
 */
export function replayData({ event, deliveryId, trace, eventText }: StoredJobData): JobData {
  // An event kept as its exact JSON text (Postgres refused it as it is) stays so.
  const kept: StoredJobData =
    eventText === undefined ? { event, deliveryId } : { event, deliveryId, eventText };
  return trace === undefined ? kept : { ...kept, trace };
}

// The attempts a letter was accepted with: `enqueue` gave the job those an inline run had left. Counted from the job,
// not from this queue's options: the queue replaying it may not be the app's (the dead-letters command makes its own).
const replayAttempts = (job: EventJob): number =>
  Math.max(1, (job.opts.attempts ?? 1) + (job.data.attemptsMade ?? 0));

/**
 * Resets a dead letter to run as a new job would, atomically and only while it is in the failed set with the failure
 * time asked for: only the event, its delivery and its trace link go on, with all the attempts it was accepted with,
 * no stall counted and no success recorded, claimed for this replay's retry: answers the claim, or undefined when it
 * is not that letter (gone, running, or failed again since) or another replay claimed it.
 * @example
 * if ((await resetForReplay(producer, queue, job, { failedAt, successKey })) !== undefined) await job.retry('failed');
 */
async function resetForReplay(
  client: Redis,
  queue: Queue<JobData>,
  job: EventJob,
  { failedAt, successKey }: { readonly failedAt?: number; readonly successKey: string },
): Promise<string | undefined> {
  const data = replayData(job.data);
  // The opts read with the job: the score check makes them this letter's. Our jobs set no option BullMQ stores
  // under a short name, so they are written back as read.
  const opts = { ...job.opts, attempts: replayAttempts(job) };
  const keys = [queue.keys.failed!, queue.toKey(job.id!), successKey];
  const args = [
    job.id!,
    failedAt ?? '',
    JSON.stringify(data),
    JSON.stringify(opts),
    CLAIM_MS,
    REPLAY_CLAIM_FIELD,
  ];
  const claim = await runScript(client, RESET, keys, args);
  return typeof claim === 'string' ? claim : undefined;
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
  let claim: string | undefined;
  if (producer !== undefined) {
    // Checked, claimed and reset in one script, only while it is still this failure and no other replay claimed it:
    // a replay that another one beat (or a stale `failedAt`) writes nothing over the run that won, never sends the
    // retry, and the letter runs as a new job would.
    claim = await resetForReplay(producer, queue, job, { failedAt, successKey });
    if (claim === undefined) return false;
  } else {
    const pool = postgresPool(queue);
    if (pool !== undefined) return replayOnPostgres(pool, queue, job, failedAt);
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
    // The retry failed with its connection (a command on a closed connection never lands later): the claim is given
    // back when Redis takes it, so that the letter can be replayed again at once rather than once the claim lapses.
    if (claim !== undefined)
      await runScript(producer!, RELEASE, [queue.toKey(job.id!)], [REPLAY_CLAIM_FIELD, claim]).catch(
        () => {},
      );
    throw error;
  }
  return true;
}

// One transaction with the letter's row locked (`onLockedLetter`): its data and attempts reset, and BullMQ's own
// `reprocess_job` (what `job.retry` calls) run on it. A replay racing another waits for the row and then finds it no
// longer failed (or failed again at a later time): it writes nothing over the run of the one that won, whose handlers
// that succeeded are kept for its next attempt, and never moves a newer failure.
async function replayOnPostgres(
  pool: PgPool,
  queue: Queue<JobData>,
  job: EventJob,
  failedAt: number | undefined,
): Promise<boolean> {
  return onLockedLetter(pool, queue, job.id!, failedAt, async (query) => {
    // As on Redis: the attempts it was accepted with (in its opts, which the worker reads, and the backend's column)
    // and no stall counted.
    const attempts = replayAttempts(job);
    await query(
      `UPDATE job SET data = $3::jsonb, opts = jsonb_set(opts, '{attempts}', to_jsonb($4::int)), max_attempts = $4,
         stalled_count = 0 WHERE queue = $1 AND id = $2`,
      [queue.name, job.id, JSON.stringify(replayData(job.data)), attempts],
    );
    await query("SELECT reprocess_job($1, $2, 'failed', $3, true, true)", [
      queue.name,
      job.id,
      job.opts.lifo === true,
    ]);
    return true;
  });
}
