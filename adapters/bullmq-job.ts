// What the BullMQ queue keeps in a job: the queued event and its failure's bookkeeping, and how to tell it from
// another app's job on the same queue name. Internal: not a subpath of the package.
import type { Job } from 'bullmq';
import type { QueuedEvent } from '../src/queue.js';

/**
 * A job's data: the queued event, the class of its last failure (for the dead-letter list), and for an inline run
 * handed over with no attempt left, its failure's message (the job fails with it at once).
 */
export type JobData = QueuedEvent & { readonly lastError?: string; readonly failedInline?: string };
/** A job of the queue. */
export type EventJob = Job<JobData>;

/**
 * True when a job's data is an event this package queued: another app's job added under the same queue name and
 * prefix is not, and is never run, listed or replayed as one.
 * @example
 * if (!isEventData(job.data)) throw new UnrecoverableError('not a workforce-webhooks event');
 */
export function isEventData(data: unknown): data is JobData {
  const event = (data as { event?: { id?: unknown; type?: unknown; data?: unknown } } | null)?.event;
  // Every event this package queues was checked on arrival: an id, a type and a `data` object at least. Data with less
  // would reach the handlers as an event without `data`.
  return (
    typeof event?.id === 'string' &&
    typeof event.type === 'string' &&
    typeof event.data === 'object' &&
    event.data !== null
  );
}
