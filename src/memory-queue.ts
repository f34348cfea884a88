// The in-process queue: bounded, concurrency-limited, retried with backoff, dead letters, graceful drain.
import { type AttemptFailure, type AttemptProcessor, startAttempt } from './attempt.js';
import { DeadLetterList } from './dead-letter-list.js';
import { ConfigurationError, WebhookError } from './errors.js';
import { inThisContext, nextTurn } from './event-loop-turn.js';
import { createWarnOnce, type Logger } from './logger.js';
import { drain } from './memory-queue-close.js';
import { Job, type JobOwner } from './memory-queue-job.js';
import { type MemoryQueueOptions, resolveMemoryQueueOptions } from './memory-queue-options.js';
import {
  GivenTurns,
  LOST_BEFORE_RETRY,
  LOST_WAITING_FOR_KEY,
  LOST_WHILE_RUNNING,
} from './memory-queue-turns.js';
import { ON_WORKERS } from './on-workers.js';
import { OrderingWait } from './ordering-wait.js';
import {
  checkReplayPlatform,
  type DeadLetterPage,
  type DeadLetterQuery,
  type DiscardOptions,
  type EnqueueResult,
  type EventQueue,
  type QueueCounts,
  type QueuedEvent,
  type QueueHooks,
  type ReplayOptions,
} from './queue.js';
import { createRetryDelay } from './retry-delay.js';
import { closeTimeoutProblem, MAX_TIMER_MS } from './timer-limit.js';
import { Watchdog } from './watchdog.js';

export type { MemoryQueueOptions } from './memory-queue-options.js';

/**
 * The default queue: fast and simple, survives `receiver.close()` (it drains) but not a killed process.
 * Where acknowledged events must survive a crash, use `createBullmqQueue` from `workforce-webhooks/bullmq`.
 * @example
 * createReceiver({ secret, queue: createMemoryQueue({ concurrency: 20, attempts: 8 }) });
 */
export function createMemoryQueue(options: MemoryQueueOptions = {}): EventQueue {
  return new MemoryQueue(resolveMemoryQueueOptions(options));
}

const FULL: EnqueueResult = Object.freeze({ status: 'full' });

// What a replay logs on Workers when it was given no ExecutionContext to keep the replayed event's run alive with.
const NO_REPLAY_PLATFORM_FIX =
  "pass the request's ExecutionContext: receiver.replay(letter, { platform: ctx }), receiver.replayDeadLetters(filter, { platform: ctx })";

// Attempts started before the queue gives the event loop a turn: handlers that end at once (or without waiting on
// I/O) start the next job in the same turn, and a backlog of them would otherwise hold every socket, the answers
// to new deliveries among them, until it drained. A hop per this many jobs costs nothing a delivery would notice.
const STARTS_PER_TURN = 100;

class MemoryQueue implements EventQueue {
  readonly inProcess = true;
  readonly #concurrency: number;
  readonly #maxQueued: number;
  readonly #attempts: number;
  // The delay before the retry that follows a failed attempt (the backoff, guarded).
  readonly #delay: (attempt: number, logger: Logger) => number;
  readonly #owner: JobOwner;
  #hooks: QueueHooks | undefined;
  #warnOnce: ReturnType<typeof createWarnOnce> | undefined;
  #ready: Job[] = [];
  #head = 0;
  readonly #delayed = new Set<Job>();
  // Delayed jobs whose way back to the ready list belongs to a request (on Workers a retry's backoff timer; for a job
  // run in a request, see `Job.inRequest`, its ordering key's wake-up): once the platform ended that request it never
  // comes. With when the request is taken for ended (one more limit past the wait's own bound) and what the dead
  // letter then says; looked through no sooner than the earliest such time.
  readonly #waitsInRequest = new Map<Job, { readonly lostAt: number; readonly reason: string }>();
  #waitsLostAt = Number.POSITIVE_INFINITY;
  // Attempts in progress, and those of them that outlived `startAttempt` (only those can be aborted): handlers
  // that return at once never touch the set.
  #running = 0;
  readonly #active = new Set<Job>();
  // Kept jobs whose turn is on its way to their request (see `Job.awaitTurn`): their slot is taken.
  readonly #given = new GivenTurns();
  // A turn taken back from a request the platform ended: the slot is freed, and the event a dead letter.
  readonly #lost = (job: Job, error: WebhookError): void => {
    this.#running--;
    void this.#bury(job, error, true);
  };
  // Kept jobs (on Workers, every job) whose attempt runs in their request, which may be ended under it: its timers,
  // the attempt's own limit among them, then never fire, and the attempt would hold its slot, its event never ending.
  readonly #keptRunning = new GivenTurns(LOST_WHILE_RUNNING);
  // An attempt taken back from a request the platform ended: the slot is freed, and the event a dead letter of it.
  readonly #lostRunning = (job: Job, error: WebhookError): void => {
    job.abandoned = true;
    this.#active.delete(job);
    job.running = undefined;
    this.#running--;
    void this.#bury(job, error);
  };
  // Attempts cut short (time limit, close) whose handlers still run: they keep their slot until they settle, or
  // one more handlerTimeoutMs (see `startAttempt`), so that `concurrency` bounds the handlers really running.
  #runaways = 0;
  // Kept jobs (on Workers, every job) with such handlers, and when their request is taken for ended: the timer that lets go of their slots
  // is one of that request's, and never fires once the platform ended it (one more limit past its own time).
  readonly #keptRunaways = new Map<Job, number>();
  #warnedRunaway = false;
  // Dead letters whose onDeadLetter call is still running: close() waits for them too (it is where an app keeps them).
  #burying = 0;
  readonly #dead: DeadLetterList;
  #process: AttemptProcessor | undefined;
  #closed = false;
  #closing: Promise<void> | undefined;
  // Once closing: when close() stops waiting for retries (performance.now()), and the error of what it gives up.
  #giveUpAt = Number.POSITIVE_INFINITY;
  #shutdown: WebhookError | undefined;
  #abandoning = false;
  #pumping = false;
  #scheduled = false;
  // Attempts started since the last turn the queue took (see STARTS_PER_TURN).
  #started = 0;
  // Made once: a closure made in #schedule would cost a context on every call, even those that return early.
  // Jobs start in the queue's own async context, never in that of the request or the job that happened to wake the
  // queue up: one turn serves the deliveries queued since the last (up to STARTS_PER_TURN), and a job that ends
  // starts the next.
  readonly #onTurn = inThisContext((): void => {
    this.#scheduled = false;
    this.#started = 0;
    this.#pump();
  });
  readonly #pumpInContext = inThisContext((): void => this.#pump());
  #onIdle: (() => void) | undefined;

  constructor({
    concurrency,
    maxQueued,
    attempts,
    backoff,
    handlerTimeoutMs,
    maxDeadLetters,
  }: Required<MemoryQueueOptions>) {
    this.#concurrency = concurrency;
    this.#maxQueued = maxQueued;
    this.#attempts = attempts;
    this.#delay = createRetryDelay(backoff);
    this.#owner = {
      timeoutMs: handlerTimeoutMs,
      watchdog: new Watchdog(handlerTimeoutMs),
      ended: (job, failure) => this.#ended(job, failure),
      settled: (job, late) => this.#settled(job, late),
      begin: inThisContext((job: Job) => this.#turnCame(job)),
      poll: this.#onTurn,
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
    this.#warnOnce = createWarnOnce(hooks.logger);
  }

  enqueue(data: QueuedEvent, failure?: unknown): Promise<EnqueueResult> {
    try {
      return Promise.resolve(this.#enqueueNow(data, failure));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  #enqueueNow(data: QueuedEvent, failure?: unknown): EnqueueResult {
    this.#checkOpen();
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

  // A new job (a delivery, a replay) is refused once closed, or before a receiver started the queue.
  #checkOpen(): void {
    if (this.#closed) throw new WebhookError('shutting_down', 'the queue is closed');
    if (this.#hooks === undefined) throw new ConfigurationError('the queue was not started by a receiver');
  }

  // An inline run's hand-over goes on as if its last attempt had failed here: the backoff of that attempt (a retry,
  // reported as this queue reports its own), or a dead letter when it was the last. One cut by close() (its handler
  // may still run, ignoring its signal) is not started again beside it: a dead letter of that attempt, as close()
  // makes of every running attempt it cuts. One whose request the platform ended under it (on Workers) is a dead letter
  // of that attempt too, as an attempt of the queue's own cut so.
  #handedOver(job: Job, failure: unknown): EnqueueResult {
    const made = job.attempt - 1;
    if (made >= this.#attempts || MemoryQueue.#notRetried(failure)) {
      job.attempt = made;
      void this.#bury(job, failure);
    } else {
      this.#hooks!.onRetry?.(job.data, made);
      this.#retryLater(job, this.#delay(made, this.#hooks!.logger));
    }
    return job;
  }

  static #notRetried(failure: unknown): boolean {
    return (
      failure instanceof WebhookError &&
      (failure.code === 'shutting_down' || failure.message.endsWith(LOST_WHILE_RUNNING))
    );
  }

  // New jobs start on the next turn of the event loop, never inside enqueue: the 202 is written before any
  // handler code runs, however long a handler computes before its first await. One turn serves the jobs queued
  // since the last, up to STARTS_PER_TURN.
  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    nextTurn(this.#onTurn);
  }

  // Both take a turn first: on Workers what a request the platform ended left behind is found at the queue's next turn,
  // and in inline mode no delivery gives it one (only a run handed over does). Asked, the queue answers with it found.
  async counts(): Promise<QueueCounts> {
    this.#pumpInContext();
    return { depth: this.#size, deadLetters: this.#dead.size };
  }

  async deadLetters(query?: DeadLetterQuery): Promise<DeadLetterPage> {
    this.#pumpInContext();
    return this.#dead.page(query);
  }

  async discard(eventId: string, { failedAt }: DiscardOptions = {}): Promise<boolean> {
    const letter = this.#dead.get(eventId);
    if (letter === undefined || (failedAt !== undefined && letter.failedAt !== failedAt)) return false;
    this.#dead.take(eventId);
    return true;
  }

  async replay(eventId: string, { failedAt, platform }: ReplayOptions = {}): Promise<boolean> {
    checkReplayPlatform(platform);
    // Read, enqueue and take out in one synchronous step: of concurrent replays of one id, only the first finds
    // the letter, so the event runs once. A full or closed queue leaves the letter where it was.
    const letter = this.#dead.get(eventId);
    if (letter === undefined || (failedAt !== undefined && letter.failedAt !== failedAt)) return false;
    this.#checkOpen();
    if (this.#size >= this.#maxQueued)
      throw new WebhookError('queue_full', 'the queue is full; replay later');
    // Its trace link goes with it: the replay's attempts link back to the delivery that accepted the event.
    const { event, deliveryId, trace } = letter;
    const job = new Job(
      trace === undefined ? { event, deliveryId } : { event, deliveryId, trace },
      this.#owner,
    );
    // Called from a request the platform ends with its answer (an admin route on Workers): the job is kept in it, as a
    // delivery's is, before it can start anywhere else. The platform's waitUntil is the caller's code: a letter it
    // took meanwhile is left to whoever took it.
    if (platform?.waitUntil !== undefined) {
      job.keepIn(platform);
      if (this.#dead.get(eventId) !== letter) {
        job.end();
        return false;
      }
    } else if (ON_WORKERS) this.#replayLost();
    this.#dead.take(eventId);
    this.#ready.push(job);
    this.#schedule();
    return true;
  }

  // Workers end a request's timers and I/O with it: a replayed run nothing keeps alive may be cut with its caller's.
  #replayLost(): void {
    this.#warnOnce!(
      'replay_wait_until_missing',
      { fix: NO_REPLAY_PLATFORM_FIX },
      `workforce-webhooks: a dead letter was replayed on Cloudflare Workers with no ExecutionContext, so the replayed event's run may be cut when the request ends, and become a dead letter again. Fix: ${NO_REPLAY_PLATFORM_FIX}`,
      'error',
    );
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

  // Every job ends processed or a dead letter: what close() gives up (see `drain`) goes to onDeadLetter.
  #drain(timeoutMs: number): Promise<void> {
    this.#closed = true;
    if (this.#idle) return Promise.resolve();
    const reason = new WebhookError('shutting_down', 'the receiver closed before this event was processed');
    this.#shutdown = reason;
    return drain(timeoutMs, {
      idle: new Promise<void>((resolve) => {
        this.#onIdle = resolve;
      }),
      giveUpFrom: (at) => {
        this.#giveUpAt = at;
        for (const job of this.#delayed) if (job.dueAt >= at) this.#giveUp(job);
      },
      abandon: () => {
        this.#abandoning = true;
        for (const job of this.#active) job.running?.abort(reason);
        for (const job of this.#delayed) clearTimeout(job.timer);
        const left = [...this.#ready.slice(this.#head), ...this.#delayed, ...this.#given];
        this.#running -= this.#given.size;
        this.#given.clear();
        this.#ready = [];
        this.#head = 0;
        this.#delayed.clear();
        this.#waitsInRequest.clear();
        for (const job of left) void this.#bury(job, reason, true);
        return this.#idle;
      },
    });
  }

  #pump(): void {
    // A job whose handlers return at once ends inside #run and pumps again: the loop below goes on instead of
    // recursing once per job.
    if (this.#pumping) return;
    this.#pumping = true;
    try {
      if (this.#given.size > 0) this.#given.reclaim(this.#lost);
      if (this.#keptRunning.size > 0) this.#keptRunning.reclaim(this.#lostRunning);
      if (this.#keptRunaways.size > 0) this.#reclaimRunaways();
      if (this.#waitsInRequest.size > 0 && performance.now() >= this.#waitsLostAt) this.#reclaimWaits();
      while (this.#running + this.#runaways < this.#concurrency && this.#head < this.#ready.length) {
        // The event loop's turn: the rest start on the next, after the I/O waiting meanwhile.
        if (++this.#started > STARTS_PER_TURN) {
          this.#schedule();
          return;
        }
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

  // The slot is the job's from here. A kept job starts in its turn's continuation, in its own request (see
  // `Job.awaitTurn`); any other starts here, in the queue's context.
  #run(job: Job): void {
    this.#running++;
    if (!job.takeTurn()) {
      this.#begin(job);
      return;
    }
    this.#given.give(job, this.#owner.timeoutMs);
  }

  // Not given any more: taken back from a request taken for ended (see `GivenTurns`), or by close().
  #turnCame(job: Job): void {
    if (this.#given.delete(job)) this.#begin(job);
  }

  #begin(job: Job): void {
    const data = job.completed.length === 0 ? job.data : { ...job.data, completed: job.completed };
    job.attemptEnded = false;
    const attempt = startAttempt(this.#process!, data, job);
    // Still running (it did not end inside startAttempt): close() may have to abort it.
    if (!job.attemptEnded) {
      job.running = attempt;
      this.#active.add(job);
      // Its own timer ends it at its limit while its request lives: one more limit, and the request is taken for ended.
      if (job.inRequest) this.#keptRunning.give(job, 2 * this.#owner.timeoutMs);
    }
  }

  #ended(job: Job, failure: AttemptFailure | undefined): void {
    // Already a dead letter, its slot freed: its request lived on after all.
    if (job.abandoned) return;
    this.#running--;
    if (job.running !== undefined) {
      this.#active.delete(job);
      job.running = undefined;
      if (this.#keptRunning.size > 0) this.#keptRunning.delete(job);
    }
    if (failure === undefined) {
      job.end();
      this.#next();
      return;
    }
    if (failure.running) {
      this.#runaways++;
      if (job.inRequest) this.#keptRunaways.set(job, performance.now() + 2 * this.#owner.timeoutMs);
    }
    const { error } = failure;
    if (error instanceof OrderingWait && !this.#abandoning) {
      job.awaitTurn();
      this.#wait(job, error);
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
    const ms = this.#delay(job.attempt - 1, this.#hooks!.logger);
    // Closing, with a backoff that ends past close()'s wait: the retry would never start. The attempt counts as a
    // retry (as it would have, given up at the end of the wait), and the letter, waiting, adds none.
    if (this.#closed && performance.now() + ms >= this.#giveUpAt) {
      void this.#bury(job, this.#shutdown, true);
      return;
    }
    job.awaitTurn();
    this.#retryLater(job, ms);
    this.#next();
  }

  // The handlers of an attempt cut short settled, or ran one more limit past it: their slot is free.
  #settled(job: Job, late: boolean): void {
    // Its cut attempt was never counted as a runaway: see #ended.
    if (job.abandoned) return;
    this.#runaways--;
    if (job.inRequest && job.runaways === 0) this.#keptRunaways.delete(job);
    if (late) this.#ranOn(job);
    this.#next();
  }

  // Said once: the slot of a handler that ignores its signal is freed while it may still run.
  #ranOn(job: Job): void {
    if (this.#warnedRunaway) return;
    this.#warnedRunaway = true;
    this.#hooks!.logger.warn(
      { eventId: job.data.event.id },
      "workforce-webhooks: a handler still runs handlerTimeoutMs after its attempt was cut short: it ignores ctx.signal, and runs on beside the queue's concurrency; pass ctx.signal to what it waits on (fetch, database calls) so that it stops",
    );
  }

  // Kept jobs whose request is taken for ended while handlers of theirs ran on past a cut: those handlers, and the
  // timers that would let go of them, stopped with it. Their slots are freed as at the end of that one more limit
  // (from #pump, whose loop then fills them).
  #reclaimRunaways(): void {
    const now = performance.now();
    for (const [job, due] of this.#keptRunaways) {
      if (due > now) continue;
      this.#keptRunaways.delete(job);
      const left = job.letGo();
      this.#runaways -= left;
      if (left > 0) this.#ranOn(job);
    }
  }

  // A delayed job waits in a request (see #waitsInRequest) until `lostAt`.
  #waitInRequest(job: Job, lostAt: number, reason: string): void {
    this.#waitsInRequest.set(job, { lostAt, reason });
    this.#waitsLostAt = Math.min(this.#waitsLostAt, lostAt);
  }

  // Delayed jobs whose request is taken for ended while they waited: a dead letter of the attempts made.
  #reclaimWaits(): void {
    const now = performance.now();
    let next = Number.POSITIVE_INFINITY;
    for (const [job, { lostAt, reason }] of this.#waitsInRequest) {
      if (lostAt > now) {
        next = Math.min(next, lostAt);
        continue;
      }
      this.#waitsInRequest.delete(job);
      clearTimeout(job.timer);
      if (this.#delayed.delete(job))
        void this.#bury(job, new WebhookError('queue_unavailable', reason), true);
    }
    this.#waitsLostAt = next;
  }

  // Between two attempts: held in the delayed set (counted, and given up by close()) until `ms` pass.
  #retryLater(job: Job, ms: number): void {
    this.#delayed.add(job);
    job.dueAt = performance.now() + ms;
    if (ON_WORKERS) this.#waitInRequest(job, job.dueAt + this.#owner.timeoutMs, LOST_BEFORE_RETRY);
    job.timer = setTimeout(() => {
      // Given up meanwhile (close(), or its request taken for ended): its timer outlived it.
      if (!this.#delayed.delete(job)) return;
      if (this.#waitsInRequest.size > 0) this.#waitsInRequest.delete(job);
      this.#ready.push(job);
      this.#pumpInContext();
    }, ms);
  }

  // The job's ordering key is held by another event: it waits, out of the running slots and as the same attempt,
  // until the key is given up (or its holder's lease passes), then queues again.
  #wait(job: Job, wait: OrderingWait): void {
    this.#delayed.add(job);
    // Its key may be given up any time: close() waits for it.
    job.dueAt = 0;
    // `ready` settles by the wait's own bound at the latest (its timer's), in a request that still runs.
    if (job.inRequest) {
      const lostAt = performance.now() + Math.min(wait.retryInMs, MAX_TIMER_MS) + this.#owner.timeoutMs;
      this.#waitInRequest(job, lostAt, LOST_WAITING_FOR_KEY);
    }
    void wait.ready.then(() => {
      if (!this.#delayed.delete(job)) return;
      if (this.#waitsInRequest.size > 0) this.#waitsInRequest.delete(job);
      this.#ready.push(job);
      this.#pumpInContext();
    });
    this.#next();
  }

  // close() gives up a job waiting out a backoff that ends too late: a dead letter of the attempts it made.
  #giveUp(job: Job): void {
    clearTimeout(job.timer);
    this.#delayed.delete(job);
    this.#waitsInRequest.delete(job);
    void this.#bury(job, this.#shutdown, true);
  }

  #next(): void {
    // Inside #pump (a job that ended at once) the loop goes on by itself.
    if (!this.#pumping) this.#pumpInContext();
    if (this.#idle) this.#onIdle?.();
  }

  // Counted until its onDeadLetter call ends, so that close() waits for it. `waiting`: close() gave the job up
  // while it waited (queued, between attempts, for its ordering key), so no attempt ended in this letter.
  async #bury(job: Job, error: unknown, waiting = false): Promise<void> {
    this.#burying++;
    try {
      const letter = job.letter(error, waiting);
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
