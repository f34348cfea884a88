// Turns given to kept jobs (Workers' waitUntil) on their way to their own request, taken back if it was ended first.
import { WebhookError } from './errors.js';
import type { Job } from './memory-queue-job.js';

const LOST =
  'the request that kept this event alive (waitUntil) was ended by the platform before the event had a free slot; replay it, or run the receiver inline on Workers';

/**
 * The kept jobs whose turn is on its way to their own request (see `Job.awaitTurn`): their slots are taken. A request
 * the platform ended before it ran the turn's continuation (Workers cap the time waitUntil keeps a request up) never
 * will: past an attempt's limit its job is taken back, for its slot to be freed and its event to become a dead
 * letter, not lost. A `Set` of its own, so the queue's checks of it cost what they cost on a plain one.
 * @example
 * if (job.takeTurn()) given.give(job, timeoutMs);
 * if (given.size > 0) given.reclaim((job, error) => bury(job, error));
 */
export class GivenTurns extends Set<Job> {
  /** The turn of `job` was given: its request is taken for ended if it has not started the attempt in `timeoutMs`. */
  give(job: Job, timeoutMs: number): void {
    // A live request runs the turn's continuation at once; one that has not within an attempt's limit was ended.
    job.dueAt = performance.now() + timeoutMs;
    this.add(job);
  }

  /** Takes back the turns given to requests taken for ended, and hands each job to `lost` with its letter's error. */
  reclaim(lost: (job: Job, error: WebhookError) => void): void {
    const now = performance.now();
    for (const job of this) {
      if (job.dueAt > now) continue;
      this.delete(job);
      lost(job, new WebhookError('queue_unavailable', LOST));
    }
  }
}
