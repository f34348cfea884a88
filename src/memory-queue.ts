// The in-process queue: bounded, concurrency-limited, retried with backoff, dead letters, graceful drain.
import { startAttempt, Watchdog } from './attempt.js';
import { ConfigurationError, WebhookError } from './errors.js';
import {
  type Backoff,
  type DeadLetter,
  type EnqueueResult,
  type EventQueue,
  exponentialBackoff,
  HandlerFailure,
  type QueuedEvent,
  type QueueHooks,
} from './queue.js';

/** Options of `createMemoryQueue`. */
export interface MemoryQueueOptions {
  /** Jobs run at once. Default 10. */
  readonly concurrency?: number;
  /** Jobs held (waiting, retrying and running) before deliveries get 503 `queue_full`. Default 10 000. */
  readonly maxQueued?: number;
  /** Attempts per event before it becomes a dead letter. Default 5. */
  readonly attempts?: number;
  /** Delay before each retry. Default exponential from 1 s to 5 min, with jitter. */
  readonly backoff?: Backoff;
  /**
   * One attempt's time limit; its `ctx.signal` is aborted then. One timer checks every attempt, so the abort
   * may come up to a quarter of the limit (at most 1 s) late. Default 30 000.
   */
  readonly handlerTimeoutMs?: number;
  /** Dead letters kept; the oldest are dropped (and logged) past it. Default 10 000. */
  readonly maxDeadLetters?: number;
}

interface Job {
  data: QueuedEvent;
  attempt: number;
  completed: readonly number[];
  timer?: ReturnType<typeof setTimeout>;
  abort?: (reason: unknown) => void;
  resolve: () => void;
}

/**
 * The default queue: fast and simple, survives `receiver.close()` (it drains) but not a killed process.
 * Where acknowledged events must survive a crash, use `createBullmqQueue` from `workforce-webhooks/bullmq`.
 * @example
 * createReceiver({ secret, queue: createMemoryQueue({ concurrency: 20, attempts: 8 }) });
 */
export function createMemoryQueue(options: MemoryQueueOptions = {}): EventQueue {
  return new MemoryQueue(options);
}

class MemoryQueue implements EventQueue {
  readonly #concurrency: number;
  readonly #maxQueued: number;
  readonly #attempts: number;
  readonly #backoff: Backoff;
  readonly #timeoutMs: number;
  readonly #maxDeadLetters: number;
  readonly #watchdog: Watchdog;
  #hooks: QueueHooks | undefined;
  #ready: Job[] = [];
  #head = 0;
  readonly #delayed = new Set<Job>();
  readonly #active = new Set<Job>();
  readonly #dead = new Map<string, DeadLetter>();
  #closed = false;
  #abandoning = false;
  #onIdle: (() => void) | undefined;

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
    this.#concurrency = concurrency;
    this.#maxQueued = maxQueued;
    this.#attempts = attempts;
    this.#backoff = backoff;
    this.#timeoutMs = handlerTimeoutMs;
    this.#watchdog = new Watchdog(handlerTimeoutMs);
    this.#maxDeadLetters = maxDeadLetters;
  }

  get #size(): number {
    return this.#ready.length - this.#head + this.#delayed.size + this.#active.size;
  }

  start(hooks: QueueHooks): void {
    if (this.#hooks !== undefined)
      throw new ConfigurationError('a queue serves one receiver; create one per receiver');
    this.#hooks = hooks;
  }

  async enqueue(data: QueuedEvent): Promise<EnqueueResult> {
    if (this.#closed) throw new WebhookError('shutting_down', 'the queue is closed');
    if (this.#hooks === undefined) throw new ConfigurationError('the queue was not started by a receiver');
    if (this.#size >= this.#maxQueued) return { status: 'full' };
    let resolve!: () => void;
    const settled = new Promise<void>((r) => {
      resolve = r;
    });
    this.#ready.push({
      data,
      attempt: (data.attemptsMade ?? 0) + 1,
      completed: data.completed ?? [],
      resolve,
    });
    this.#pump();
    return { status: 'queued', settled };
  }

  async deadLetters(): Promise<readonly DeadLetter[]> {
    return [...this.#dead.values()];
  }

  async replay(eventId: string): Promise<boolean> {
    const letter = this.#dead.get(eventId);
    if (letter === undefined) return false;
    const result = await this.enqueue({ event: letter.event, deliveryId: letter.deliveryId });
    if (result.status === 'full') throw new WebhookError('queue_full', 'the queue is full; replay later');
    this.#dead.delete(eventId);
    return true;
  }

  async close({ timeoutMs = 10_000 }: { readonly timeoutMs?: number } = {}): Promise<void> {
    this.#closed = true;
    if (this.#size === 0) return;
    const idle = new Promise<void>((resolve) => {
      this.#onIdle = resolve;
    });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(resolve, timeoutMs, 'timeout');
    });
    if ((await Promise.race([idle, timedOut])) === 'timeout') {
      // Nothing is dropped silently: what could not finish in time is handed to onDeadLetter.
      this.#abandoning = true;
      const reason = new WebhookError('shutting_down', 'the receiver closed before this event was processed');
      for (const job of this.#active) job.abort?.(reason);
      for (const job of this.#delayed) clearTimeout(job.timer);
      const left = [...this.#ready.slice(this.#head), ...this.#delayed];
      this.#ready = [];
      this.#head = 0;
      this.#delayed.clear();
      await Promise.all(left.map((job) => this.#bury(job, reason)));
      if (this.#size > 0) await idle;
    }
    clearTimeout(timer);
  }

  #pump(): void {
    while (this.#active.size < this.#concurrency && this.#head < this.#ready.length) {
      const job = this.#ready[this.#head]!;
      this.#ready[this.#head++] = undefined as unknown as Job;
      if (this.#head > 1024 && this.#head * 2 > this.#ready.length) {
        this.#ready = this.#ready.slice(this.#head);
        this.#head = 0;
      }
      void this.#run(job);
    }
  }

  async #run(job: Job): Promise<void> {
    const data = job.completed.length === 0 ? job.data : { ...job.data, completed: job.completed };
    const attempt = startAttempt(this.#hooks!.process, data, {
      attempt: job.attempt,
      timeoutMs: this.#timeoutMs,
      watchdog: this.#watchdog,
    });
    job.abort = attempt.abort;
    this.#active.add(job);
    try {
      await attempt.done;
      this.#active.delete(job);
      job.resolve();
    } catch (error) {
      this.#active.delete(job);
      if (error instanceof HandlerFailure) job.completed = error.completed;
      if (job.attempt < this.#attempts && !this.#abandoning) {
        job.attempt++;
        this.#delayed.add(job);
        job.timer = setTimeout(
          () => {
            this.#delayed.delete(job);
            this.#ready.push(job);
            this.#pump();
          },
          this.#backoff(job.attempt - 1),
        );
      } else {
        await this.#bury(job, error);
      }
    } finally {
      this.#pump();
      if (this.#size === 0) this.#onIdle?.();
    }
  }

  async #bury(job: Job, error: unknown): Promise<void> {
    const letter: DeadLetter = {
      event: job.data.event,
      deliveryId: job.data.deliveryId,
      attempts: job.attempt,
      error,
      failedAt: Date.now(),
    };
    if (this.#dead.size >= this.#maxDeadLetters) {
      const oldest = this.#dead.keys().next().value as string;
      this.#dead.delete(oldest);
      this.#hooks!.logger.error(
        { eventId: oldest },
        'workforce-webhooks: dead letter dropped (maxDeadLetters reached)',
      );
    }
    this.#dead.set(letter.event.id, letter);
    await this.#hooks!.onDeadLetter(letter);
    job.resolve();
  }
}
