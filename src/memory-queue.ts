// The in-process queue: bounded, concurrency-limited, retried with backoff, dead letters, graceful drain.
import { type AttemptFailure, type AttemptProcessor, startAttempt, Watchdog } from './attempt.js';
import { DeadLetterList } from './dead-letter-list.js';
import { ConfigurationError, WebhookError } from './errors.js';
import { Job, type JobOwner } from './memory-queue-job.js';
import { OrderingWait } from './ordering-wait.js';
import {
  type Backoff,
  type DeadLetter,
  type DeadLetterPage,
  type DeadLetterQuery,
  type DiscardOptions,
  type EnqueueResult,
  type EventQueue,
  exponentialBackoff,
  type QueueCounts,
  type QueuedEvent,
  type QueueHooks,
  type ReplayOptions,
} from './queue.js';
import { closeTimeoutProblem, MAX_TIMER_MS } from './timer-limit.js';

/** Options of `createMemoryQueue`. */
export interface MemoryQueueOptions {
  /** Jobs run at once. Default 10. */
  readonly concurrency?: number;
  /**
   * Jobs held (waiting, retrying and running) before deliveries get 503 `queue_full`. Default 10 000. An inline
   * run handed over after its 202 is taken past it: the sender will not send that event again.
   */
  readonly maxQueued?: number;
  /** Attempts per event before it becomes a dead letter. Default 5. */
  readonly attempts?: number;
  /**
   * Delay before each retry (ms), given the attempt that failed. Default exponential from 1 s to 5 min, with
   * jitter. A delay past 2^31 - 1 ms (about 24.8 days, the longest a timer waits) is cut to it.
   */
  readonly backoff?: Backoff;
  /**
   * One attempt's time limit; its `ctx.signal` is aborted then. One timer checks every attempt, so the abort
   * may come up to a quarter of the limit (at most 1 s) late. Default 30 000.
   */
  readonly handlerTimeoutMs?: number;
  /** Dead letters kept; the oldest are dropped (and logged) past it. Default 10 000. */
  readonly maxDeadLetters?: number;
}

/**
 * The default queue: fast and simple, survives `receiver.close()` (it drains) but not a killed process.
 * Where acknowledged events must survive a crash, use `createBullmqQueue` from `workforce-webhooks/bullmq`.
 * @example
 * createReceiver({ secret, queue: createMemoryQueue({ concurrency: 20, attempts: 8 }) });
 */
export function createMemoryQueue(options: MemoryQueueOptions = {}): EventQueue {
  if (typeof options !== 'object' || options === null)
    throw new ConfigurationError('createMemoryQueue options must be an object, e.g. { concurrency: 20 }');
  return new MemoryQueue(options);
}

const FULL: EnqueueResult = Object.freeze({ status: 'full' });

// setImmediate runs after the I/O callback that queued the job has written its answer; runtimes without it
// (Workers, browsers) get a zero timeout.
const nextTurn: (run: () => void) => void =
  typeof globalThis.setImmediate === 'function'
    ? (run) => void globalThis.setImmediate(run)
    : (run) => void setTimeout(run, 0);

// Node's async context (AsyncLocalStorage, and what builds on it: OpenTelemetry's context, a logger's request id).
// Looked up at run time, so that a runtime without node:async_hooks (an edge bundle) never imports it.
const asyncHooks = (
  globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }
).process?.getBuiltinModule?.('node:async_hooks') as typeof import('node:async_hooks') | undefined;

// `run` bound to the async context it is made in (the queue's creation), where there is one.
const inThisContext = (run: () => void): (() => void) =>
  asyncHooks === undefined ? run : asyncHooks.AsyncResource.bind(run);

class MemoryQueue implements EventQueue {
  readonly inProcess = true;
  readonly #concurrency: number;
  readonly #maxQueued: number;
  readonly #attempts: number;
  readonly #backoff: Backoff;
  readonly #owner: JobOwner;
  #hooks: QueueHooks | undefined;
  #ready: Job[] = [];
  #head = 0;
  readonly #delayed = new Set<Job>();
  // Attempts in progress, and those of them that outlived `startAttempt` (only those can be aborted): handlers
  // that return at once never touch the set.
  #running = 0;
  readonly #active = new Set<Job>();
  // Dead letters whose onDeadLetter call is still running: close() waits for them too (it is where an app keeps them).
  #burying = 0;
  readonly #dead: DeadLetterList;
  #process: AttemptProcessor | undefined;
  #closed = false;
  #closing: Promise<void> | undefined;
  #abandoning = false;
  #pumping = false;
  #scheduled = false;
  // Made once: a closure made in #schedule would cost a context on every call, even those that return early.
  // Jobs start in the queue's own async context, never in that of the request or the job that happened to wake the
  // queue up: one turn serves every delivery queued since the last, and a job that ends starts the next.
  readonly #onTurn = inThisContext((): void => {
    this.#scheduled = false;
    this.#pump();
  });
  readonly #pumpInContext = inThisContext((): void => this.#pump());
  #onIdle: (() => void) | undefined;
  // A backoff past the longest timer is logged once, not at every retry.
  #warnedLongBackoff = false;

  constructor({
    concurrency = 10,
    maxQueued = 10_000,
    attempts = 5,
    backoff = exponentialBackoff(),
    handlerTimeoutMs = 30_000,
    maxDeadLetters = 10_000,
  }: MemoryQueueOptions) {
    for (const [name, value] of Object.entries({
      concurrency,
      maxQueued,
      attempts,
      handlerTimeoutMs,
      maxDeadLetters,
    })) {
      if (!Number.isInteger(value) || value < 1)
        throw new ConfigurationError(`queue ${name} must be a positive integer`);
    }
    // Checked here, not at the first retry: a backoff that is not a function would fail every retry for good.
    if (typeof backoff !== 'function')
      throw new ConfigurationError(
        `queue backoff must be a function from the failed attempt to a delay in ms, e.g. (attempt) => attempt * 1000, got ${typeof backoff}`,
      );
    this.#concurrency = concurrency;
    this.#maxQueued = maxQueued;
    this.#attempts = attempts;
    this.#backoff = backoff;
    this.#owner = {
      timeoutMs: handlerTimeoutMs,
      watchdog: new Watchdog(handlerTimeoutMs),
      ended: (job, failure) => this.#ended(job, failure),
    };
    this.#dead = new DeadLetterList(maxDeadLetters);
  }

  get #size(): number {
    return this.#ready.length - this.#head + this.#delayed.size + this.#running;
  }

  get #idle(): boolean {
    return this.#size === 0 && this.#burying === 0;
  }

  start(hooks: QueueHooks): void {
    if (this.#hooks !== undefined)
      throw new ConfigurationError('a queue serves one receiver; create one per receiver');
    this.#hooks = hooks;
    this.#process = hooks.process;
  }

  enqueue(data: QueuedEvent, failure?: unknown): Promise<EnqueueResult> {
    try {
      return Promise.resolve(this.#enqueueNow(data, failure));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  #enqueueNow(data: QueuedEvent, failure?: unknown): EnqueueResult {
    if (this.#closed) throw new WebhookError('shutting_down', 'the queue is closed');
    if (this.#hooks === undefined) throw new ConfigurationError('the queue was not started by a receiver');
    // An event with attempts made was already answered 2xx (an inline run handed over): the sender will not
    // retry it, so it is taken past maxQueued, which only holds back new deliveries.
    if (data.attemptsMade !== undefined && data.attemptsMade > 0)
      return this.#handedOver(new Job(data, this.#owner), failure);
    if (this.#size >= this.#maxQueued) return FULL;
    const job = new Job(data, this.#owner);
    this.#ready.push(job);
    this.#schedule();
    return job;
  }

  // An inline run's hand-over goes on as if its last attempt had failed here: the backoff of that attempt (a retry,
  // reported as this queue reports its own), or a dead letter when it was the last. One cut by close() (its handler
  // may still run, ignoring its signal) is not started again beside it: a dead letter of that attempt, as close()
  // makes of every running attempt it cuts.
  #handedOver(job: Job, failure: unknown): EnqueueResult {
    const made = job.attempt - 1;
    if (made >= this.#attempts || (failure instanceof WebhookError && failure.code === 'shutting_down')) {
      job.attempt = made;
      void this.#bury(job, failure);
    } else {
      this.#hooks!.onRetry?.(job.data, made);
      this.#retryLater(job, this.#delay(made));
    }
    return job;
  }

  // New jobs start on the next turn of the event loop, never inside enqueue: the 202 is written before any
  // handler code runs, however long a handler computes before its first await. One turn serves every job
  // queued since the last.
  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    nextTurn(this.#onTurn);
  }

  async counts(): Promise<QueueCounts> {
    return { depth: this.#size, deadLetters: this.#dead.size };
  }

  async deadLetters(query?: DeadLetterQuery): Promise<DeadLetterPage> {
    return this.#dead.page(query);
  }

  async discard(eventId: string, { failedAt }: DiscardOptions = {}): Promise<boolean> {
    const letter = this.#dead.get(eventId);
    if (letter === undefined || (failedAt !== undefined && letter.failedAt !== failedAt)) return false;
    this.#dead.take(eventId);
    return true;
  }

  async replay(eventId: string, { failedAt }: ReplayOptions = {}): Promise<boolean> {
    // Read, enqueue and take out in one synchronous step: of concurrent replays of one id, only the first finds
    // the letter, so the event runs once. A full or closed queue leaves the letter where it was.
    const letter = this.#dead.get(eventId);
    if (letter === undefined || (failedAt !== undefined && letter.failedAt !== failedAt)) return false;
    // Its trace link goes with it: the replay's attempts link back to the delivery that accepted the event.
    const { event, deliveryId, trace } = letter;
    const result = this.#enqueueNow(
      trace === undefined ? { event, deliveryId } : { event, deliveryId, trace },
    );
    if (result.status === 'full') throw new WebhookError('queue_full', 'the queue is full; replay later');
    this.#dead.take(eventId);
    return true;
  }

  // Every call answers with the one drain: a second close resolves with the first, never after its own timeout.
  // A timeout no timer can keep (NaN, a negative, past 2^31 - 1 ms) would fire at once and dead-letter every
  // running event: refused, and the queue stays open.
  close({ timeoutMs = 10_000 }: { readonly timeoutMs?: number } = {}): Promise<void> {
    const refused = closeTimeoutProblem(timeoutMs, 'queue close');
    if (refused !== undefined) return Promise.reject(refused);
    this.#closing ??= this.#drain(timeoutMs);
    return this.#closing;
  }

  // Waits for the jobs and for the onDeadLetter calls in flight. Its last fifth (at most 1 s) is kept for the
  // onDeadLetter calls of what is left then; whatever still runs at `timeoutMs` is not waited for. With Infinity,
  // it waits for the drain however long it takes, and sets no timer.
  async #drain(timeoutMs: number): Promise<void> {
    this.#closed = true;
    if (this.#idle) return;
    const idle = new Promise<'idle'>((resolve) => {
      this.#onIdle = () => resolve('idle');
    });
    if (timeoutMs === Number.POSITIVE_INFINITY) {
      await idle;
      return;
    }
    const reserveMs = Math.min(1000, timeoutMs / 5);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const until = (ms: number): Promise<'idle' | 'timeout'> =>
      Promise.race([
        idle,
        new Promise<'timeout'>((resolve) => {
          timer = setTimeout(resolve, ms, 'timeout');
        }),
      ]);
    if ((await until(timeoutMs - reserveMs)) === 'timeout') {
      // Nothing is dropped silently: what could not finish in time is handed to onDeadLetter.
      this.#abandoning = true;
      const reason = new WebhookError('shutting_down', 'the receiver closed before this event was processed');
      for (const job of this.#active) job.running?.abort(reason);
      for (const job of this.#delayed) clearTimeout(job.timer);
      const left = [...this.#ready.slice(this.#head), ...this.#delayed];
      this.#ready = [];
      this.#head = 0;
      this.#delayed.clear();
      for (const job of left) void this.#bury(job, reason, true);
      if (!this.#idle) await until(reserveMs);
    }
    clearTimeout(timer);
  }

  #pump(): void {
    // A job whose handlers return at once ends inside #run and pumps again: the loop below goes on instead of
    // recursing once per job.
    if (this.#pumping) return;
    this.#pumping = true;
    try {
      while (this.#running < this.#concurrency && this.#head < this.#ready.length) {
        const job = this.#ready[this.#head]!;
        this.#ready[this.#head++] = undefined as unknown as Job;
        if (this.#head > 1024 && this.#head * 2 > this.#ready.length) {
          this.#ready = this.#ready.slice(this.#head);
          this.#head = 0;
        }
        this.#run(job);
      }
    } finally {
      this.#pumping = false;
    }
  }

  #run(job: Job): void {
    const data = job.completed.length === 0 ? job.data : { ...job.data, completed: job.completed };
    this.#running++;
    job.attemptEnded = false;
    const attempt = startAttempt(this.#process!, data, job);
    // Still running (it did not end inside startAttempt): close() may have to abort it.
    if (!job.attemptEnded) {
      job.running = attempt;
      this.#active.add(job);
    }
  }

  #ended(job: Job, failure: AttemptFailure | undefined): void {
    this.#running--;
    if (job.running !== undefined) {
      this.#active.delete(job);
      job.running = undefined;
    }
    if (failure === undefined) {
      job.end();
      this.#next();
      return;
    }
    const { error } = failure;
    if (error instanceof OrderingWait && !this.#abandoning) {
      this.#wait(job, error.ready);
      return;
    }
    if (failure.completed !== undefined) job.completed = failure.completed;
    if (job.attempt >= this.#attempts || this.#abandoning) {
      // An ordering wait cut by close() is an attempt that never ran: the letter says it waited.
      void this.#bury(job, error, error instanceof OrderingWait);
      return;
    }
    this.#hooks!.onRetry?.(job.data, job.attempt);
    job.attempt++;
    this.#retryLater(job, this.#delay(job.attempt - 1));
    this.#next();
  }

  // Between two attempts: held in the delayed set (counted, and given up by close()) until `ms` pass.
  #retryLater(job: Job, ms: number): void {
    this.#delayed.add(job);
    job.timer = setTimeout(() => {
      this.#delayed.delete(job);
      this.#ready.push(job);
      this.#pumpInContext();
    }, ms);
  }

  // The job's ordering key is held by another event: it waits, out of the running slots and as the same attempt,
  // until the key is given up (or its holder's lease passes), then queues again.
  #wait(job: Job, ready: Promise<void>): void {
    this.#delayed.add(job);
    void ready.then(() => {
      if (!this.#delayed.delete(job)) return;
      this.#ready.push(job);
      this.#pumpInContext();
    });
    this.#next();
  }

  #next(): void {
    // Inside #pump (a job that ended at once) the loop goes on by itself.
    if (!this.#pumping) this.#pumpInContext();
    if (this.#idle) this.#onIdle?.();
  }

  // A backoff that throws must not lose the job: it is retried after the default delay instead. One past the
  // longest timer would fire at once (Node's overflow), so it is cut to that longest timer.
  #delay(attempt: number): number {
    let ms: number;
    try {
      ms = this.#backoff(attempt);
      // NaN fails both tests; Infinity is a delay past the longest timer.
      if (!(typeof ms === 'number' && ms >= 0))
        throw new ConfigurationError(`backoff returned ${String(ms)}`);
    } catch (error) {
      this.#hooks!.logger.error(
        { err: error },
        'workforce-webhooks: the queue backoff failed; retrying in 1 s',
      );
      return 1000;
    }
    if (ms <= MAX_TIMER_MS) return ms;
    // A configuration mistake (seconds taken for milliseconds, say), told once rather than at every retry.
    if (!this.#warnedLongBackoff) {
      this.#warnedLongBackoff = true;
      this.#hooks!.logger.warn(
        { backoffMs: ms },
        `workforce-webhooks: the queue backoff returned more than ${MAX_TIMER_MS} ms (about 24.8 days, the longest a timer waits); retrying after ${MAX_TIMER_MS} ms instead: make backoff return milliseconds below that`,
      );
    }
    return MAX_TIMER_MS;
  }

  // Counted until its onDeadLetter call ends, so that close() waits for it. `waiting`: close() gave the job up
  // while it waited (queued, between attempts, for its ordering key), so no attempt ended in this letter.
  async #bury(job: Job, error: unknown, waiting = false): Promise<void> {
    this.#burying++;
    try {
      const { event, deliveryId, trace } = job.data;
      const letter: DeadLetter = {
        event,
        deliveryId,
        // A waiting job's number is that of the attempt it waited to make.
        attempts: waiting ? job.attempt - 1 : job.attempt,
        error,
        failedAt: Date.now(),
        ...(waiting ? { waiting } : {}),
        ...(trace === undefined ? {} : { trace }),
      };
      const dropped = this.#dead.add(letter);
      if (dropped !== undefined) {
        this.#hooks!.logger.error(
          { eventId: dropped },
          'workforce-webhooks: dead letter dropped (maxDeadLetters reached)',
        );
      }
      await this.#hooks!.onDeadLetter(letter);
    } catch (error) {
      // Nobody awaits a burial: a failing hook must not become an unhandled rejection.
      this.#hooks!.logger.error({ err: error }, 'workforce-webhooks: onDeadLetter failed');
    } finally {
      this.#burying--;
      job.end();
      this.#next();
    }
  }
}
