// One attempt of a job: its own AbortSignal, a time limit, and an end as soon as the signal aborts.
import { HandlerTimeoutError } from './errors.js';
import type { JobProcessor, QueuedEvent } from './queue.js';

/** A running attempt: `done` settles when the handlers do, or rejects with the abort reason first. */
export interface Attempt {
  readonly done: Promise<void>;
  abort(reason: unknown): void;
}

/** Options of `startAttempt`. */
export interface AttemptOptions {
  /** 1-based attempt number, given to handlers as `ctx.attempt`. */
  readonly attempt: number;
  /** The attempt's limit: its signal is aborted with a `HandlerTimeoutError` then. */
  readonly timeoutMs: number;
}

/**
 * Starts `process` on `job`. A handler that ignores its signal cannot hold the queue: the attempt ends (as a
 * failure) the moment the signal aborts, and the handler's late result is ignored.
 * @example
 * const attempt = startAttempt(hooks.process, job, { attempt: 1, timeoutMs: 30_000 });
 * await attempt.done;
 */
export function startAttempt(process: JobProcessor, job: QueuedEvent, options: AttemptOptions): Attempt {
  const { attempt, timeoutMs } = options;
  const controller = new AbortController();
  const { signal } = controller;
  const timer = setTimeout(() => controller.abort(new HandlerTimeoutError(timeoutMs)), timeoutMs);
  const aborted = new Promise<never>((_, reject) => {
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
  const done = Promise.race([process(job, { attempt, signal }), aborted]).finally(() => clearTimeout(timer));
  return { done, abort: (reason) => controller.abort(reason) };
}
