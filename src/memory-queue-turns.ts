// Kept jobs (Workers' waitUntil) whose request must show it still runs: a turn on its way there, or an attempt in it.
import { WebhookError } from './errors.js';
import type { Job } from './memory-queue-job.js';

/** Said of a job whose turn was given to a request the platform had ended. */
export const LOST_BEFORE_TURN =
  'the request that kept this event alive (waitUntil) was ended by the platform before the event had a free slot; replay it, or run the receiver inline on Workers';

/** Said of a job whose attempt was running in a request the platform ended. */
export const LOST_WHILE_RUNNING =
  'the request that kept this event alive (waitUntil) was ended by the platform while its handlers ran (past the time Workers allow waitUntil, or cancelled); replay it, and keep handlerTimeoutMs under that time';

/** Said of a job whose request the platform ended while it waited out the backoff before a retry. */
export const LOST_BEFORE_RETRY =
  'the request that kept this event alive (waitUntil) was ended by the platform while the event waited to be retried (past the time Workers allow waitUntil, or cancelled); replay it, and keep the backoff under that time';

/** Said of a job whose request the platform ended while it waited for its ordering key. */
export const LOST_WAITING_FOR_KEY =
  'the request that kept this event alive (waitUntil) was ended by the platform while the event waited for its ordering key (past the time Workers allow waitUntil, or cancelled); replay it';

/**
 * Kept jobs waiting on their own request (see `Job.awaitTurn`): their slots are taken. A request the platform ended
 * (Workers cap the time waitUntil keeps a request up) never runs a turn's continuation, nor the timers and I/O of an
 * attempt started in it: past its due time such a job is taken back, for its slot to be freed and its event to become
 * a dead letter, not lost. A `Set` of its own, so the queue's checks of it cost what they cost on a plain one.
 * @example
 * if (job.takeTurn()) given.give(job, timeoutMs);
 * if (given.size > 0) given.reclaim((job, error) => bury(job, error));
 */
export class GivenTurns extends Set<Job> {
  readonly #lost: string;

  /** `lost`: what the dead letter of a job taken back says. */
  constructor(lost: string = LOST_BEFORE_TURN) {
    super();
    this.#lost = lost;
  }

  /** Holds `job`: its request is taken for ended if it has not shown it runs (left this set) in `timeoutMs`. */
  give(job: Job, timeoutMs: number): void {
    // A live request runs the turn's continuation at once, and an attempt's own timer ends it at its limit: one that
    // has not within one more limit was ended.
    job.dueAt = performance.now() + timeoutMs;
    this.add(job);
  }

  /** Takes back the jobs whose requests are taken for ended, and hands each to `lost` with its letter's error. */
  reclaim(lost: (job: Job, error: WebhookError) => void): void {
    const now = performance.now();
    for (const job of this) {
      if (job.dueAt > now) continue;
      this.delete(job);
      lost(job, new WebhookError('queue_unavailable', this.#lost));
    }
  }
}
