// One attempt of a job: its own AbortSignal, a time limit, and an end as soon as the signal aborts.
import { HandlerTimeoutError } from './errors.js';
import type { AttemptContext, JobProcessor, QueuedEvent } from './queue.js';

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
  /** Enforces the limit from one shared timer (a busy queue); without it the attempt sets its own. */
  readonly watchdog?: Watchdog;
}

/**
 * Aborts the attempts it watches once they pass their limit, from one interval timer for all of them. Per
 * delivery, a timer of its own costs more than the rest of the attempt (libuv re-arms on every change); the price
 * is precision: an attempt is aborted up to a quarter of its limit (at most 1 s) late.
 * @example
 * const watchdog = new Watchdog(30_000); startAttempt(process, job, { attempt: 1, timeoutMs: 30_000, watchdog });
 */
export class Watchdog {
  readonly #timeoutMs: number;
  readonly #everyMs: number;
  readonly #watched = new Set<RunningAttempt>();
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(timeoutMs: number) {
    this.#timeoutMs = timeoutMs;
    this.#everyMs = Math.max(1, Math.min(1000, Math.floor(timeoutMs / 4)));
  }

  /** Watches `attempt` until it ends. */
  watch(attempt: RunningAttempt): void {
    this.#watched.add(attempt);
    if (this.#timer === undefined) this.#timer = setInterval(() => this.#sweep(), this.#everyMs);
    else if (this.#watched.size === 1) this.#timer.ref();
  }

  /** Stops watching `attempt`. */
  forget(attempt: RunningAttempt): void {
    this.#watched.delete(attempt);
    // Idle: the timer no longer keeps the process alive, and the next sweep stops it. It is not stopped here,
    // because a queue that empties between deliveries would then set a new timer for every one.
    if (this.#watched.size === 0) this.#timer?.unref();
  }

  #sweep(): void {
    if (this.#watched.size === 0) {
      clearInterval(this.#timer);
      this.#timer = undefined;
      return;
    }
    const now = performance.now();
    for (const attempt of this.#watched) {
      if (attempt.deadline <= now) attempt.abort(new HandlerTimeoutError(this.#timeoutMs));
    }
  }
}

// One object per attempt, with the AbortController made only when a handler reads `signal` or the attempt is
// aborted: per job, the controller and a listener on it cost more than the rest of the attempt.
class RunningAttempt implements Attempt, AttemptContext {
  readonly attempt: number;
  readonly deadline: number;
  readonly done: Promise<void>;
  #controller: AbortController | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #reject!: (reason: unknown) => void;
  readonly #watchdog: Watchdog | undefined;

  constructor(process: JobProcessor, job: QueuedEvent, { attempt, timeoutMs, watchdog }: AttemptOptions) {
    this.attempt = attempt;
    this.deadline = performance.now() + timeoutMs;
    this.#watchdog = watchdog;
    if (watchdog !== undefined) watchdog.watch(this);
    else this.#timer = setTimeout(() => this.abort(new HandlerTimeoutError(timeoutMs)), timeoutMs);
    this.done = new Promise<void>((resolve, reject) => {
      this.#reject = reject;
      // A handler that ignores its signal cannot hold the queue: an abort rejects `done` at once.
      process(job, this).then(
        () => {
          this.#end();
          resolve();
        },
        (error: unknown) => {
          this.#end();
          reject(error);
        },
      );
    });
  }

  get signal(): AbortSignal {
    this.#controller ??= new AbortController();
    return this.#controller.signal;
  }

  // Bound, so queues can keep `attempt.abort` on their own records.
  readonly abort = (reason: unknown): void => {
    const { signal } = this;
    if (signal.aborted) return;
    this.#controller!.abort(reason);
    this.#end();
    this.#reject(signal.reason);
  };

  #end(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#watchdog?.forget(this);
  }
}

export type { RunningAttempt };

/**
 * Starts `process` on `job`. The attempt ends (as a failure) the moment its signal aborts, on the time limit or
 * through `abort`, and the handlers' late result is ignored.
 * @example
 * const attempt = startAttempt(hooks.process, job, { attempt: 1, timeoutMs: 30_000 });
 * await attempt.done;
 */
export function startAttempt(process: JobProcessor, job: QueuedEvent, options: AttemptOptions): Attempt {
  return new RunningAttempt(process, job, options);
}
