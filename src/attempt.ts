// One attempt of a job: its own AbortSignal, a time limit, an end as soon as the signal aborts, and what it keeps.
import { HandlerTimeoutError } from './errors.js';
import { type AttemptContext, type AttemptWatcher, HandlerFailure, type QueuedEvent } from './queue.js';
import { MAX_TIMER_MS } from './timer-limit.js';
import type { Watchdog, Watched } from './watchdog.js';

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
  /**
   * Called once after an attempt cut short while its handlers ran (its failure's `running`): when they settle
   * (`late` false), or when they still run one more time limit later (`late` true: they ignore their signal).
   */
  onSettled?(late: boolean): void;
}

/** Why an attempt failed: what the handlers threw, or the abort reason. */
export interface AttemptFailure {
  readonly error: unknown;
  /**
   * The handlers that had succeeded, by index: a `HandlerFailure`'s, or, when the attempt was cut short, those its
   * processor's watcher had seen succeed by then. Undefined when none are known: keep what the job had.
   */
  readonly completed?: readonly number[];
  /** The attempt was cut short (its signal aborted) while its handlers ran: `onSettled` follows. */
  readonly running?: true;
}

/** Runs one attempt; may answer at once (no promise) when every handler returned without one. */
export type AttemptProcessor = (job: QueuedEvent, ctx: AttemptContext) => void | PromiseLike<void>;

// A failure the processor threw: a `HandlerFailure` knows which handlers succeeded.
const failed = (error: unknown): AttemptFailure =>
  error instanceof HandlerFailure ? { error, completed: error.completed } : { error };

// One object per attempt, with the AbortController made only when a handler reads `signal` or the attempt is
// aborted, and the `done` promise only when someone reads it: per job, each costs more than the rest of the
// attempt. Handlers that return at once end it before the constructor returns, without touching a timer.
class RunningAttempt implements Attempt, AttemptContext, Watched {
  readonly attempt: number;
  /** When the attempt passes its limit; once it is cut short with handlers running, when they pass one more. */
  deadline: number;
  readonly #timeoutMs: number;
  #controller: AbortController | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #watchdog: Watchdog | undefined;
  // The options, kept until the end to call their `onEnd`; then, cut short while handlers ran, their `onSettled`.
  #options: AttemptOptions | undefined;
  #runaway: AttemptOptions | undefined;
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
    this.#timeoutMs = timeoutMs;
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
    } else {
      // A limit past the longest timer ("no limit" as a huge number) would fire after 1 ms: it waits the longest.
      const ms = Math.min(timeoutMs, MAX_TIMER_MS);
      this.#timer = setTimeout(() => this.abort(new HandlerTimeoutError(timeoutMs)), ms);
    }
    result.then(
      () => this.#settle(undefined),
      (error: unknown) => this.#settle(failed(error)),
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
    const completed = this.#cut(error);
    // The watcher may have ended it already (by aborting it again).
    if (this.#ended) return;
    if (this.#options?.onSettled === undefined) {
      this.#finish({ error, completed });
      return;
    }
    // Its handlers still run: they hold what the attempt held (a queue's slot) until they settle, or until one
    // more limit passes (they ignore the signal; a handler that never settles must not hold it for good).
    this.#runaway = this.#options;
    this.#finish({ error, completed, running: true });
    this.deadline = performance.now() + this.#timeoutMs;
    if (this.#watchdog !== undefined) this.#watchdog.watchRunaway(this);
    else {
      this.#timer = setTimeout(() => this.#release(true), Math.min(this.#timeoutMs, MAX_TIMER_MS));
      this.#timer.unref?.();
    }
  }

  /** Past its deadline: a running attempt is cut short; handlers that still run after their cut are let go. */
  expire(): void {
    if (!this.#ended) this.abort(new HandlerTimeoutError(this.#timeoutMs));
    else this.#release(true);
  }

  // The handlers' outcome: the attempt's, or, once it was cut short, the end of what they held.
  #settle(failure: AttemptFailure | undefined): void {
    if (this.#ended) this.#release(false);
    else this.#finish(failure);
  }

  #release(late: boolean): void {
    const options = this.#runaway;
    if (options === undefined) return;
    this.#runaway = undefined;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#watchdog?.forgetRunaway(this);
    options.onSettled?.(late);
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
