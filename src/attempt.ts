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
  // The controller is made when a handler reads `ctx.signal` or the attempt is aborted, and the race ends by a
  // direct reject rather than a listener on the signal: per job, both cost more than the rest of the attempt.
  let controller: AbortController | undefined;
  let end!: (reason: unknown) => void;
  const aborted = new Promise<never>((_, reject) => {
    end = reject;
  });
  const abort = (reason: unknown): void => {
    controller ??= new AbortController();
    if (controller.signal.aborted) return;
    controller.abort(reason);
    end(controller.signal.reason);
  };
  const timer = setTimeout(() => abort(new HandlerTimeoutError(timeoutMs)), timeoutMs);
  const context = {
    attempt,
    get signal(): AbortSignal {
      controller ??= new AbortController();
      return controller.signal;
    },
  };
  const done = Promise.race([process(job, context), aborted]).finally(() => clearTimeout(timer));
  return { done, abort };
}
