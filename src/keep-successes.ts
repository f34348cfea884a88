// The hook by which a durable queue keeps each handler's success as it happens, so a crash cuts only the others.
import type { QueuedEvent } from './queue.js';

/**
 * The key under which a durable queue gives a job it runs the function that keeps, as it happens, the success of one
 * of the event's handlers while others still run: a crash then cuts only those, and the next attempt (any instance)
 * skips the rest. It is called with the job and every handler that has succeeded so far (earlier attempts' too);
 * never for an event with one handler, nor for the last handler to settle (the attempt's outcome records that).
 * @example
 * (job.data as KeepsSuccesses)[keepSuccesses] = (job, completed) => void write(job, completed);
 */
export const keepSuccesses: unique symbol = Symbol('workforce-webhooks.keepSuccesses');

/** A job that may carry a queue's `keepSuccesses` function. */
export type KeepsSuccesses = QueuedEvent & {
  [keepSuccesses]?: (job: QueuedEvent, completed: readonly number[]) => void;
};
