// A job of the memory queue: its event, its attempts and handlers done, who hears when an attempt ends, its dead letter.
import type { Attempt, AttemptFailure, AttemptOptions, Watchdog } from './attempt.js';
import type { DeadLetter, QueuedEvent } from './queue.js';

// A first attempt has no handler done yet: one shared empty list instead of one per job.
const NONE_COMPLETED: readonly number[] = Object.freeze([]);

/** What every job of a queue shares: its attempts' limit and watchdog, and where an attempt's end goes. */
export interface JobOwner {
  readonly timeoutMs: number;
  readonly watchdog: Watchdog;
  ended(job: Job, failure: AttemptFailure | undefined): void;
  /** The handlers of its attempt cut short settled (`late`: or ran one more limit past it). */
  settled(job: Job, late: boolean): void;
}

/**
 * A job of the memory queue. It is also the `queued` answer of `enqueue`: its `settled` promise is made only when
 * someone asks for it (serverless adapters do; a long-running server never does), which saves a promise per
 * delivery. And it is the options of its attempts, so starting one makes no options object and no closure.
 * @example
 * const job = new Job(data, owner);
 * startAttempt(process, job.data, job);
 */
export class Job implements AttemptOptions {
  readonly status = 'queued';
  readonly data: QueuedEvent;
  attempt: number;
  completed: readonly number[];
  timer: ReturnType<typeof setTimeout> | undefined;
  /** When its retry is due (performance.now()), while it waits out a backoff; 0 while it waits for its key. */
  dueAt = 0;
  /** The attempt in progress once it outlives `startAttempt`, for close() to abort. */
  running: Attempt | undefined;
  /** Set by the end of the current attempt; false while it runs. */
  attemptEnded = false;
  readonly #owner: JobOwner;
  #ended = false;
  #settled: Promise<void> | undefined;
  #resolve: (() => void) | undefined;

  constructor(data: QueuedEvent, owner: JobOwner) {
    this.data = data;
    this.attempt = (data.attemptsMade ?? 0) + 1;
    this.completed = data.completed ?? NONE_COMPLETED;
    this.#owner = owner;
  }

  get timeoutMs(): number {
    return this.#owner.timeoutMs;
  }

  get watchdog(): Watchdog {
    return this.#owner.watchdog;
  }

  onEnd(failure: AttemptFailure | undefined): void {
    this.attemptEnded = true;
    this.#owner.ended(this, failure);
  }

  onSettled(late: boolean): void {
    this.#owner.settled(this, late);
  }

  /** Resolves when the job ends: its handlers succeeded, or it became a dead letter. */
  get settled(): Promise<void> {
    this.#settled ??= this.#ended
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          this.#resolve = resolve;
        });
    return this.#settled;
  }

  end(): void {
    this.#ended = true;
    this.#resolve?.();
  }

  /**
   * Its dead letter, failed with `error` now. `waiting`: close() gave it up while it waited (queued, between
   * attempts, for its ordering key), so no attempt ended in this letter.
   */
  letter(error: unknown, waiting: boolean): DeadLetter {
    const { event, deliveryId, trace } = this.data;
    return {
      event,
      deliveryId,
      // A waiting job's number is that of the attempt it waited to make.
      attempts: waiting ? this.attempt - 1 : this.attempt,
      error,
      failedAt: Date.now(),
      ...(waiting ? { waiting } : {}),
      ...(trace === undefined ? {} : { trace }),
    };
  }
}
