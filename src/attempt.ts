// One attempt of a job: its own AbortSignal, a time limit, an end as soon as the signal aborts, and what it keeps.
import { HandlerTimeoutError } from './errors.js';
import { type AttemptContext, type AttemptWatcher, HandlerFailure, type QueuedEvent } from './queue.js';

/** A running attempt: `done` settles when the handlers do, or rejects with the abort reason first. */
export interface Attempt {
  readonly done: Promise<void>;
  /** Once it failed: the handlers that had succeeded, for the next attempt to skip (see `AttemptFailure`). */
  readonly completed: readonly number[] | undefined;
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
  /**
   * Called once when the attempt ends, with the failure or undefined, possibly before `startAttempt` returns
   * (handlers that return at once). A queue that uses it need never read `done`. Called as a method of the
   * options, so a queue's job can be its own options: no options object and no closure per attempt.
   */
  onEnd?(failure: AttemptFailure | undefined): void;
}

/** Why an attempt failed: what the handlers threw, or the abort reason. */
export interface AttemptFailure {
  readonly error: unknown;
  /**
   * The handlers that had succeeded, by index: a `HandlerFailure`'s, or, when the attempt was cut short, those its
   * processor's watcher had seen succeed by then. Undefined when none are known: keep what the job had.
   */
  readonly completed?: readonly number[];
}

/** Runs one attempt; may answer at once (no promise) when every handler returned without one. */
export type AttemptProcessor = (job: QueuedEvent, ctx: AttemptContext) => void | PromiseLike<void>;

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
    // Workers' (and browsers') timers are numbers, with no ref/unref: a call would throw, and the attempt whose
    // start or end made it would never end, holding its queue slot for good.
    else if (this.#watched.size === 1) this.#timer.ref?.();
  }

  /** Stops watching `attempt`. */
  forget(attempt: RunningAttempt): void {
    this.#watched.delete(attempt);
    // Idle: the timer no longer keeps the process alive, and the next sweep stops it. It is not stopped here,
    // because a queue that empties between deliveries would then set a new timer for every one.
    if (this.#watched.size === 0) this.#timer?.unref?.();
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

// A failure the processor threw: a `HandlerFailure` knows which handlers succeeded.
const failed = (error: unknown): AttemptFailure =>
  error instanceof HandlerFailure ? { error, completed: error.completed } : { error };

// One object per attempt, with the AbortController made only when a handler reads `signal` or the attempt is
// aborted, and the `done` promise only when someone reads it: per job, each costs more than the rest of the
// attempt. Handlers that return at once end it before the constructor returns, without touching a timer.
class RunningAttempt implements Attempt, AttemptContext {
  readonly attempt: number;
  readonly deadline: number;
  #controller: AbortController | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #watchdog: Watchdog | undefined;
  // The options, kept until the end to call their `onEnd`.
  #options: AttemptOptions | undefined;
  #ended = false;
  #failure: AttemptFailure | undefined;
  // The processor's watcher, given only while handlers still run: asked when the attempt is cut short.
  #watcher: AttemptWatcher | undefined;
  #done: Promise<void> | undefined;
  #resolve: (() => void) | undefined;
  #reject: ((reason: unknown) => void) | undefined;

  constructor(process: AttemptProcessor, job: QueuedEvent, options: AttemptOptions) {
    const { attempt, timeoutMs, watchdog } = options;
    this.attempt = attempt;
    this.deadline = performance.now() + timeoutMs;
    this.#options = options;
    let result: void | PromiseLike<void>;
    try {
      result = process(job, this);
    } catch (error) {
      this.#finish(failed(error));
      return;
    }
    if (result === undefined || typeof result.then !== 'function') {
      this.#finish(undefined);
      return;
    }
    // A handler that ignores its signal cannot hold the queue: an abort ends the attempt at once.
    if (watchdog !== undefined) {
      this.#watchdog = watchdog;
      watchdog.watch(this);
    } else this.#timer = setTimeout(() => this.abort(new HandlerTimeoutError(timeoutMs)), timeoutMs);
    result.then(
      () => this.#finish(undefined),
      (error: unknown) => this.#finish(failed(error)),
    );
  }

  watch(watcher: AttemptWatcher): void {
    if (!this.#ended) this.#watcher = watcher;
  }

  get completed(): readonly number[] | undefined {
    return this.#failure?.completed;
  }

  get signal(): AbortSignal {
    this.#controller ??= new AbortController();
    return this.#controller.signal;
  }

  get done(): Promise<void> {
    if (this.#done === undefined) {
      if (!this.#ended) {
        this.#done = new Promise<void>((resolve, reject) => {
          this.#resolve = resolve;
          this.#reject = reject;
        });
      } else
        this.#done = this.#failure === undefined ? Promise.resolve() : Promise.reject(this.#failure.error);
    }
    return this.#done;
  }

  abort(reason: unknown): void {
    if (this.#ended) return;
    const { signal } = this;
    if (!signal.aborted) this.#controller!.abort(reason);
    // An abort listener may have ended it already (by aborting it again).
    if (this.#ended) return;
    const error: unknown = signal.reason;
    this.#finish({ error, completed: this.#cut(error) });
  }

  // The watcher reports the cut and says which handlers had succeeded: copied, as handlers still running go on
  // adding to its list after the attempt ended.
  #cut(reason: unknown): readonly number[] | undefined {
    const watcher = this.#watcher;
    if (watcher === undefined) return undefined;
    try {
      const completed = watcher.cut(reason);
      return completed === undefined ? undefined : [...completed];
    } catch {
      return undefined;
    }
  }

  #finish(failure: AttemptFailure | undefined): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#failure = failure;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#watchdog?.forget(this);
    if (failure === undefined) this.#resolve?.();
    else this.#reject?.(failure.error);
    const options = this.#options;
    this.#options = undefined;
    options?.onEnd?.(failure);
  }
}

export type { RunningAttempt };

/**
 * Starts `process` on `job`. The attempt ends (as a failure) the moment its signal aborts, on the time limit or
 * through `abort`, and the handlers' late result is ignored: the watcher the processor gave `ctx.watch` is asked
 * first, to report the cut and say which handlers had succeeded (the failure's `completed`).
 * @example
 * const attempt = startAttempt(hooks.process, job, { attempt: 1, timeoutMs: 30_000 });
 * await attempt.done;
 */
export function startAttempt(process: AttemptProcessor, job: QueuedEvent, options: AttemptOptions): Attempt {
  return new RunningAttempt(process, job, options);
}
