// A job of the memory queue: its event, attempts and handlers done, where its attempts end, its turn, its dead letter.
import type { Attempt, AttemptFailure, AttemptOptions } from './attempt.js';
import { errorClassOf } from './dead-letters.js';
import { ConfigurationError } from './errors.js';
import { ON_WORKERS } from './on-workers.js';
import type { DeadLetter, QueuedEvent, ReplayPlatform } from './queue.js';
import type { Watchdog } from './watchdog.js';

// A first attempt has no handler done yet: one shared empty list instead of one per job.
const NONE_COMPLETED: readonly number[] = Object.freeze([]);

// How often the timer of a kept job waiting for its turn ticks (see `Job.awaitTurn`).
const KEEP_ALIVE_MS = 1000;

/** What every job of a queue shares: its attempts' limit and watchdog, and where an attempt's end goes. */
export interface JobOwner {
  readonly timeoutMs: number;
  readonly watchdog: Watchdog;
  ended(job: Job, failure: AttemptFailure | undefined): void;
  /** The handlers of its attempt cut short settled (`late`: or ran one more limit past it). */
  settled(job: Job, late: boolean): void;
  /** Starts the attempt of a job whose turn came (see `Job.awaitTurn`), in the queue's own async context. */
  readonly begin: (job: Job) => void;
  /**
   * A tick of a kept job's request while it waits: the queue takes a turn, in case what it waits on died with
   * another request (a turn given to a request the platform ended, the queue's own next-turn timer).
   */
  readonly poll: () => void;
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
  /**
   * When its retry is due (performance.now()), while it waits out a backoff; 0 while it waits for its key; while
   * its turn is on its way to its request, when that request is taken for ended.
   */
  dueAt = 0;
  /** The attempt in progress once it outlives `startAttempt`, for close() to abort. */
  running: Attempt | undefined;
  /** False while an attempt runs. */
  attemptEnded = true;
  /**
   * Its attempt ran in a request taken for ended (see `GivenTurns`): its event is a dead letter, and what that
   * attempt does later is not counted.
   */
  abandoned = false;
  readonly #owner: JobOwner;
  #ended = false;
  #settled: Promise<void> | undefined;
  #resolve: (() => void) | undefined;
  // Kept alive by its request: `settled` was asked for, to be handed to the platform's waitUntil (Workers, Next's
  // after()). On Workers a request's timers and I/O live only as long as that request: such a job's attempts start
  // from its own request's promise chain and time themselves with their own timers, never in another request.
  #kept = false;
  // A kept job waiting for a slot: resolves its turn, whose continuation starts the attempt in the job's request;
  // and the timer that keeps that request up meanwhile.
  #turn: ((job: Job) => void) | undefined;
  #keepAlive: ReturnType<typeof setInterval> | undefined;
  // Handlers of its attempts cut short that still run: the request that keeps the job stays up until they stop,
  // or the timer that lets go of their slot would die with it, and the slot with it.
  #runaways = 0;

  constructor(data: QueuedEvent, owner: JobOwner) {
    this.data = data;
    this.attempt = (data.attemptsMade ?? 0) + 1;
    this.completed = data.completed ?? NONE_COMPLETED;
    this.#owner = owner;
  }

  /** Kept alive by its request (its `settled` was asked for): its attempts start and time themselves there. */
  get kept(): boolean {
    return this.#kept;
  }

  /**
   * Its attempts run in a request the platform may end under them: a kept job's, and on Workers any job's (one nothing
   * keeps alive, a replay called without the platform, runs in whichever request started it).
   */
  get inRequest(): boolean {
    return this.#kept || ON_WORKERS;
  }

  get timeoutMs(): number {
    return this.#owner.timeoutMs;
  }

  // The shared watchdog's one timer lives in the request that happened to set it (Workers end a request's timers with
  // it): an attempt run in a request sets its own there.
  get watchdog(): Watchdog | undefined {
    return this.inRequest ? undefined : this.#owner.watchdog;
  }

  onEnd(failure: AttemptFailure | undefined): void {
    this.attemptEnded = true;
    if (failure?.running) this.#runaways++;
    this.#owner.ended(this, failure);
  }

  onSettled(late: boolean): void {
    // Let go of already (see `letGo`): its request lived on after all.
    if (this.#runaways === 0) return;
    this.#runaways--;
    this.#owner.settled(this, late);
    if (this.#ended && this.#runaways === 0) this.#resolve?.();
  }

  /** Handlers of its attempts cut short that still run (each holds a slot). */
  get runaways(): number {
    return this.#runaways;
  }

  /**
   * Its request is taken for ended while handlers of its attempts cut short ran: they, and the timers that would let
   * go of them, stopped with it. Forgets them, and returns how many there were.
   */
  letGo(): number {
    const runaways = this.#runaways;
    this.#runaways = 0;
    if (this.#ended) this.#resolve?.();
    return runaways;
  }

  /**
   * Resolves when the job ends (its handlers succeeded, or it became a dead letter) and no handler of an attempt cut
   * short still holds a slot. Asking for it keeps the job in its request: see `awaitTurn`.
   */
  get settled(): Promise<void> {
    if (this.#settled === undefined) {
      if (this.#ended && this.#runaways === 0) this.#settled = Promise.resolve();
      else {
        this.#settled = new Promise<void>((resolve) => {
          this.#resolve = resolve;
        });
        this.#kept = true;
        if (!this.#ended && this.attemptEnded) this.awaitTurn();
      }
    }
    return this.#settled;
  }

  /**
   * Hands `settled` to the platform's waitUntil, which keeps the job in the calling request (see `awaitTurn`): a
   * replay called from a request, as a delivery's answer does. A waitUntil that throws ends the job, never queued,
   * and is refused with the fix.
   */
  keepIn(platform: ReplayPlatform): void {
    try {
      platform.waitUntil!(this.settled);
    } catch (error) {
      this.end();
      throw new ConfigurationError(
        `replay platform.waitUntil threw (${errorClassOf(error)}), so nothing was replayed: pass the platform context itself so that waitUntil keeps its \`this\`, e.g. { platform: ctx }, not { platform: { waitUntil: ctx.waitUntil } }`,
      );
    }
  }

  /**
   * A kept job about to wait for a slot (queued, retrying, waiting for its ordering key) makes its turn here, in its
   * own request's async chain (called from that request, or from the end of its own attempt): `takeTurn`, from
   * whichever request frees the slot, resolves it, and the runtime runs the continuation, the attempt's start, in
   * the request that made it (workerd runs a promise's continuations in the request that created it, from
   * compatibility date 2024-10-14). Meanwhile a timer of its own keeps that request up: workerd cancels a request
   * that waits on nothing of its own (a promise another request resolves is not), as it could never go on.
   */
  awaitTurn(): void {
    if (!this.#kept || this.#turn !== undefined) return;
    this.#keepAlive = setInterval(this.#owner.poll, KEEP_ALIVE_MS);
    // Node's process, by contrast, must not be held up by it.
    this.#keepAlive.unref?.();
    void new Promise<Job>((resolve) => {
      this.#turn = resolve;
    }).then(Job.#begin);
  }

  // The turn's continuation, in the job's request: the timer that kept it up is done.
  static #begin(job: Job): void {
    clearInterval(job.#keepAlive);
    job.#keepAlive = undefined;
    job.#owner.begin(job);
  }

  /** Gives a kept job waiting for a slot its turn (its attempt starts in its request); false for any other job. */
  takeTurn(): boolean {
    const turn = this.#turn;
    if (turn === undefined) return false;
    this.#turn = undefined;
    turn(this);
    return true;
  }

  end(): void {
    this.#ended = true;
    // Given up while it waited for its turn (close()): nothing will start it.
    if (this.#keepAlive !== undefined) {
      clearInterval(this.#keepAlive);
      this.#keepAlive = undefined;
    }
    if (this.#runaways === 0) this.#resolve?.();
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
