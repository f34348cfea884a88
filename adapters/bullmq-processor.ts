// The BullMQ queue's processor: one attempt of a job on this instance, aborted when its lock is lost or the queue closes.
// Internal: not a subpath of the package.
import { DelayedError, UnrecoverableError } from 'bullmq';
import type { Redis } from 'ioredis';
import { type Attempt, startAttempt } from '../src/attempt.js';
import { errorClassOf } from '../src/dead-letters.js';
import { type KeepsSuccesses, keepSuccesses } from '../src/dispatch.js';
import { WebhookError } from '../src/errors.js';
import { OrderingWait } from '../src/ordering-wait.js';
import type { QueueHooks } from '../src/queue.js';
import { keptError } from './bullmq-dead-letters.js';
import { type EventJob, isEventData, type JobData } from './bullmq-job.js';
import { onPostgres, writeDataUnderLock } from './bullmq-postgres-letter.js';
import { storableError, storedJob } from './bullmq-postgres-text.js';
import type { SuccessRecords } from './bullmq-success.js';
import { runScript, script } from './redis-script.js';

const LOCK_LOST = 'the job lock was lost';

// Writes a job's data only while the attempt may (KEYS: the job, its lock, the active list; ARGV: the data, the token,
// the job id): its lock is the attempt's own, or it lapsed and the job is still active, so no attempt ran it since. An
// older attempt, cut by a lost lock, must not overwrite what the attempt that took the job over recorded.
const WRITE_UNDER_LOCK = script(`local lock = redis.call('GET', KEYS[2])
if lock == ARGV[2] or (not lock and redis.call('LPOS', KEYS[3], ARGV[3])) then
  redis.call('HSET', KEYS[1], 'data', ARGV[1])
  return 1
end
return 0`);

// Writes the job's data as above, through the worker's connection: BullMQ's own commands for the job go there, so
// the write lands in order with them. True when written. BullMQ's Postgres backend gets the same check on the job's
// row and its lock token; any other is written as BullMQ's `updateData` does.
const writeUnderLock = async (job: EventJob, token: string, data: JobData): Promise<boolean> => {
  // The worker that fetched the job (`Job.queue`, protected in BullMQ's types): its keys, and its backend's Redis
  // connection (where BullMQ's `updateData` takes it), which only the Redis backend has.
  const { queue } = job as unknown as {
    readonly queue: { readonly backend?: { readonly client?: Promise<Redis> }; toKey(type: string): string };
  };
  const connection = queue.backend?.client;
  if (connection === undefined) {
    const written = await writeDataUnderLock(job, token, data);
    if (written !== undefined) return written;
    await job.updateData(data);
    return true;
  }
  const client = await connection;
  const id = job.id!;
  const key = queue.toKey(id);
  const keys = [key, `${key}:lock`, queue.toKey('active')];
  return (await runScript(client, WRITE_UNDER_LOCK, keys, [JSON.stringify(data), token, id])) === 1;
};

/** The worker's processor, and what the queue tells it about the attempts it runs. */
export interface JobRunner {
  /** BullMQ's processor (no third argument: see `createJobRunner`). */
  readonly processor: (job: EventJob, token?: string) => Promise<void>;
  /** Aborts the running attempts of `ids` (all when left out): their handlers get a `shutting_down` error. */
  abort(reason: string, ids?: Iterable<string>): void;
  /**
   * BullMQ could not renew these jobs' locks, with these tokens (another worker may take them): the attempts that hold
   * those tokens stop, each a retry. A failure for an older token of a job run here again since is not theirs.
   */
  lockLost(ids: readonly string[], tokens: readonly string[]): void;
  /** True while an attempt of job `id` runs here: its lock is renewed until its processor returns. */
  holds(id: string): boolean;
  /**
   * BullMQ recorded the failure of `job`'s attempt (its `failed` event): the queue counts it, not `shutDown`. True when
   * `shutDown` already counted it as a retry (BullMQ's record came after the close ended): not a retry twice.
   */
  recorded(job: EventJob): boolean;
  /**
   * Counts as a retry each attempt the shutdown cut short whose failure BullMQ never recorded (its connections were
   * dropped, or Redis was away): the job stays stored, and another instance runs it again.
   */
  shutDown(): void;
}

/**
 * The processor of a queue's worker. It keeps its own map of running attempts by job id, so that a lost lock or a
 * forced shutdown aborts them, rather than BullMQ's per-job AbortController: a processor that takes BullMQ's signal
 * gets one made for every job, which costs more per job than this map (docs/benchmarks.md, "Durable path").
 * @example
 * const runner = createJobRunner({ hooks: () => hooks!, successes, name, handlerTimeoutMs: 30_000 });
 * new Worker(name, runner.processor, options);
 */
export function createJobRunner({
  hooks,
  successes,
  name,
  handlerTimeoutMs,
}: {
  /** The receiver's hooks, once the queue is started (the worker runs nothing before). */
  readonly hooks: () => QueueHooks;
  readonly successes: SuccessRecords;
  /** The queue's name, for log lines. */
  readonly name: string;
  readonly handlerTimeoutMs: number;
}): JobRunner {
  const running = new Map<string, Attempt>();
  // The attempts aborted because their job's lock was lost. BullMQ cannot record their failure (its moveToFailed
  // finds the lock gone and emits `error`, never `failed`), so the processor counts each: a retry, as another worker
  // runs the job again. Weak: an entry goes with its attempt.
  const lockLost = new WeakSet<Attempt>();
  // The job the processor running for each job id holds, with its lock token (`job.token`), set as it starts (BullMQ
  // took the lock for it just before): a lock renewal that failed for another token is an older attempt's, and a
  // newer one must not stop for it.
  const jobs = new Map<string, EventJob>();
  // Jobs whose attempt failed and writes its record: a handler that succeeds late writes nothing over it.
  const failing = new WeakSet<EventJob>();
  // The attempts the shutdown aborted, and the jobs of those that failed for it, each with its count, until BullMQ
  // records the failure (its `failed` event counts it then: a retry or a dead letter). One whose failure BullMQ
  // never records (the close dropped its connections first, or Redis was away) is counted at the end of the close,
  // so each is counted once. Empty but at a shutdown.
  const cutByShutdown = new WeakSet<Attempt>();
  const unrecorded = new Map<EventJob, () => void>();
  const countedAtShutdown = new WeakSet<EventJob>();
  const abort = (reason: string, ids: Iterable<string> = running.keys()): void => {
    // Handlers get an Error, as for every other abort.
    for (const id of [...ids]) {
      const attempt = running.get(id);
      if (attempt === undefined) continue;
      cutByShutdown.add(attempt);
      attempt.abort(new WebhookError('shutting_down', reason));
    }
  };
  const loseLock = (attempt: Attempt): void => {
    lockLost.add(attempt);
    attempt.abort(new WebhookError('shutting_down', LOCK_LOST));
  };

  // The dispatcher's `keepSuccesses`: one function for every job. Written only for the job this instance runs now
  // (not an older attempt's data) and under its lock, never awaited by the handlers: one write per success of a
  // handler while others of the event still run.
  const keep = (data: KeepsSuccesses, completed: readonly number[]): void => {
    const job = jobs.get(data.event.id);
    // The same event object: this attempt's data (an older attempt's was read apart), maybe rewritten since.
    if (job?.data.event !== data.event || job.token === undefined || failing.has(job)) return;
    void writeUnderLock(job, job.token, { ...(data as JobData), completed: [...completed] }).catch(() => {});
  };

  const processor = async (job: EventJob, token?: string): Promise<void> => {
    const id = job.id!;
    // An attempt of this job still running here lost its lock, as this one holds it now (it lapsed while this worker
    // was stuck, and a stalled check handed the job back before a renewal could tell): it stops, as for a lock lost.
    const earlier = running.get(id);
    if (earlier !== undefined) loseLock(earlier);
    if (token !== undefined) {
      job.token = token;
      jobs.set(id, job);
    }
    try {
      let { data } = job;
      const { logger, process, onRetry } = hooks();
      // Another app adding jobs under this queue's name and prefix: failed at once, without retries, rather than
      // handed to the handlers (or to onDeadLetter) as an event it is not. Its data is never logged.
      if (!isEventData(data)) {
        logger.error(
          { jobId: id, jobName: job.name, queue: name },
          'workforce-webhooks: a job on this queue is not a workforce-webhooks event (does another app use the same BullMQ queue name and prefix? give this receiver a name of its own); failed without running a handler',
        );
        throw new UnrecoverableError('not a workforce-webhooks event');
      }
      // An event Postgres could not hold as it is was kept as its exact JSON text: the handlers get it as it came.
      data = storedJob(data);
      job.data = data;
      if (job.stalledCounter > 0 && (await successes.succeededBefore(id, String(job.timestamp)))) {
        logger.info(
          { eventId: data.event.id, queue: name },
          'workforce-webhooks: this event succeeded before Redis stalled; not run again',
        );
        return;
      }
      // An inline run's hand-over with no attempt left: the inline failure, recorded as this job's only attempt.
      if (data.failedInline !== undefined) throw keptError(data.failedInline, data.lastError);
      successes.started(id, job.processedOn);
      (data as KeepsSuccesses)[keepSuccesses] = keep;
      const number = (data.attemptsMade ?? 0) + job.attemptsMade + 1;
      const attempt = startAttempt(process, data, { attempt: number, timeoutMs: handlerTimeoutMs });
      running.set(id, attempt);
      try {
        await attempt.done;
        successes.succeeded(id, String(job.timestamp));
      } catch (error) {
        // Its ordering key is held (maybe on another instance): back to delayed, as the same attempt, rather than
        // holding a worker slot while it waits.
        if (error instanceof OrderingWait && token !== undefined) {
          await job.moveToDelayed(Date.now() + error.retryInMs, token);
          throw new DelayedError();
        }
        // Cut short for a lost lock: counted here, as BullMQ will not record it (see `lockLost`).
        if (lockLost.has(attempt)) onRetry?.(data, number);
        else if (cutByShutdown.has(attempt)) unrecorded.set(job, () => onRetry?.(data, number));
        // Kept on the job before BullMQ records the failure: the handlers that succeeded (by then, for an attempt cut
        // short by its time limit, a lost lock or a shutdown), so the next attempt (any instance) skips them, and the
        // failure's class, for the dead-letter list.
        // Written under the attempt's lock: once another worker holds it, that attempt's record is the newer one.
        const lastError = errorClassOf(error);
        const completed = attempt.completed ?? data.completed;
        if (lastError !== data.lastError || (completed?.length ?? 0) > (data.completed?.length ?? 0)) {
          const next: JobData = { ...data, ...(completed === undefined ? {} : { completed }), lastError };
          failing.add(job);
          if (token === undefined) await job.updateData(next);
          else {
            // As `updateData` does: the job's data in this process is the record, written or not.
            job.data = next;
            await writeUnderLock(job, token, next);
          }
        }
        // Its message or stack holding text Postgres refuses would have BullMQ's record of it refused: made storable.
        throw onPostgres(job) ? storableError(error) : error;
      } finally {
        if (running.get(id) === attempt) {
          running.delete(id);
          successes.ended(id);
        }
      }
    } finally {
      if (jobs.get(id) === job) jobs.delete(id);
    }
  };

  return {
    processor,
    abort,
    lockLost(ids, lost) {
      for (let index = 0; index < ids.length; index++) {
        const id = ids[index]!;
        const attempt = running.get(id);
        if (attempt !== undefined && jobs.get(id)?.token === lost[index]) loseLock(attempt);
      }
    },
    holds: (id) => jobs.has(id),
    recorded(job) {
      unrecorded.delete(job);
      return countedAtShutdown.has(job);
    },
    shutDown() {
      const counts = [...unrecorded];
      unrecorded.clear();
      for (const [job, count] of counts) {
        countedAtShutdown.add(job);
        count();
      }
    },
  };
}
