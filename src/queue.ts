// The queue interface the receiver hands accepted events to, and the shared shapes of jobs and dead letters.
import type { DeadLetter, DeadLetterPage, DeadLetterQuery } from './dead-letters.js';
import { ConfigurationError } from './errors.js';
import type { Logger } from './logger.js';
import type { WorkforceEvent } from './types.js';

export type {
  DeadLetter,
  DeadLetterFilter,
  DeadLetterPage,
  DeadLetterQuery,
  DeadLetterTime,
} from './dead-letters.js';

/** An accepted event waiting to be processed. Plain data, so durable queues can store it. */
export interface QueuedEvent {
  readonly event: WorkforceEvent;
  readonly deliveryId: string | undefined;
  /** Attempts already made (an inline run that failed after its answer); the queue goes on from there. */
  readonly attemptsMade?: number;
  /** Indexes of handlers that already succeeded for this event; they are not run again. */
  readonly completed?: readonly number[];
  /** With `createReceiver({ telemetry })`: the accepting delivery's trace link, for the attempts to link back. */
  readonly trace?: TraceLink;
}

/** What travels with a job to its attempts, on any instance (plain strings, e.g. a W3C `traceparent`). */
export type TraceLink = Readonly<Record<string, string>>;

/** Counts a queue can give cheaply: jobs held (waiting, retrying, running) and dead letters kept. */
export interface QueueCounts {
  readonly depth: number;
  readonly deadLetters: number;
}

/** What the queue gives the processor for one attempt. */
export interface AttemptContext {
  /** 1-based. */
  readonly attempt: number;
  /** Aborted on the attempt's timeout or on shutdown. */
  readonly signal: AbortSignal;
  /** With `createReceiver({ ordering })`: the event's record key, when it has one. */
  readonly orderingKey?: string;
  /** With `ordering.stale: 'run'`: the event is older than the newest handled one of its key. */
  readonly stale?: boolean;
  /**
   * Gives the attempt the processor's watcher, asked once if the attempt is cut short. The queue's attempts
   * (`startAttempt`) take it; a processor that wraps the context passes it on.
   */
  watch?(watcher: AttemptWatcher): void;
}

/** What an attempt asks its processor when it is cut short (its time limit, a shutdown), just before it ends. */
export interface AttemptWatcher {
  /**
   * The attempt was cut short with `reason`: report it if it is a handler failure (a time limit), and answer the
   * handlers that have succeeded so far, by index, for the next attempt to skip (undefined: none to keep).
   */
  cut(reason: unknown): readonly number[] | undefined;
}

/**
 * Runs one attempt of a job. On failure it rejects with a `HandlerFailure` whose `completed` lists the
 * handlers that succeeded, which the queue keeps on the job for the next attempt.
 */
export type JobProcessor = (job: QueuedEvent, ctx: AttemptContext) => Promise<void>;

/** What `createReceiver` gives its queue in `start`. */
export interface QueueHooks {
  readonly process: JobProcessor;
  readonly onDeadLetter: (letter: DeadLetter) => Promise<void>;
  /** Attempt `attempt` of `job` failed and the queue will try it again (telemetry). */
  readonly onRetry?: (job: QueuedEvent, attempt: number) => void;
  /**
   * A replay whose call was already answered (rejected at a durable queue's deadline) landed later: the letter of
   * `eventId` was queued again (telemetry; a replay answered true is reported by the receiver).
   */
  readonly onLateReplay?: (eventId: string) => void;
  readonly logger: Logger;
}

/** `queued` once the job is held (in Redis, for a durable queue); `full` when the queue refuses more. */
export type EnqueueResult =
  | { readonly status: 'queued'; readonly settled?: Promise<void> }
  | { readonly status: 'full' };

/**
 * Where accepted events wait for their handlers. Implementations: `createMemoryQueue()` and
 * `createBullmqQueue()` (`workforce-webhooks/bullmq`). One queue serves one receiver.
 * @example
 * createReceiver({ secret, queue: createMemoryQueue({ concurrency: 4 }) });
 */
export interface EventQueue {
  /** Called once by `createReceiver`; from then on jobs run through `hooks.process`. */
  start(hooks: QueueHooks): void;
  /**
   * Holds the job; rejects when the backend cannot be reached. A job with `attemptsMade` was already answered
   * 2xx (an inline run handed over, `failure` the error of its last attempt): take it even when full, since the
   * sender will not send it again; run it after the backoff of attempt `attemptsMade`, or, with no attempt left,
   * make it a dead letter at once (with `failure`). One whose `failure` is the shutdown's (`shutting_down`) is not run
   * again in this process: the memory queue keeps it as a dead letter, a durable one for another instance. Its failed
   * attempt is reported once, by what follows it: `hooks.onRetry` when the queue will run it again, else as the
   * dead letter.
   */
  enqueue(job: QueuedEvent, failure?: unknown): Promise<EnqueueResult>;
  /**
   * One page of the dead letters that match the query's filter, newest first (`limit` default 100, at most
   * 1 000); every one stays kept.
   */
  deadLetters(query?: DeadLetterQuery): Promise<DeadLetterPage>;
  /**
   * Queues a dead letter's event again, from its first attempt; false when there is no such dead letter. Of
   * concurrent replays of one id, exactly one answers true and runs it. With `failedAt`, only the letter of that
   * failure: false when it was replayed and failed again since (a bulk replay never runs a letter twice).
   */
  replay(eventId: string, options?: ReplayOptions): Promise<boolean>;
  /**
   * Drops a dead letter for good; false when there is no such dead letter (or a replay took it first). With
   * `failedAt`, only the letter of that failure: false when it was replayed and failed again since (a bulk discard
   * never drops a newer failure its filter left out).
   */
  discard(eventId: string, options?: DiscardOptions): Promise<boolean>;
  /** Jobs held (waiting, retrying, running) and dead letters kept, for telemetry's gauges; cheap to call. */
  counts?(): Promise<QueueCounts>;
  /**
   * True when `enqueue` answers from this process's memory and cannot stall (the memory queue): the receiver then
   * puts no deadline (`queueTimeoutMs`) on it. A queue that waits on a server must leave it unset.
   */
  readonly inProcess?: boolean;
  /**
   * Stops taking jobs and drains, within `timeoutMs`; what is left near it becomes dead letters (memory, which keeps
   * the last fifth, at most 1 s, for their `onDeadLetter` calls, and makes one at once of a retry whose backoff ends
   * past the wait) or stays stored (durable). From then on `enqueue`
   * and `replay` reject at once with `shutting_down` (the memory queue's `replay` of a letter it does not hold
   * answers false); so do a durable queue's other calls (its connections are closed), where the memory queue still
   * answers `deadLetters`, `discard` and `counts` from its memory.
   */
  close(options?: { readonly timeoutMs?: number }): Promise<void>;
}

/** Options of `EventQueue.replay`. */
export interface ReplayOptions {
  /** The letter's `failedAt` as read: a letter that failed again since then is not replayed. */
  readonly failedAt?: number;
  /**
   * Where the replay is called from a request of a platform that ends its work with its answer (Workers: pass `ctx`
   * itself, whose `waitUntil` is called on it; Next: `{ waitUntil: after }`): the memory queue hands it the replayed
   * event's run, which then runs in that request, and a run the platform ends before its turn becomes a dead letter
   * again (`queue_unavailable`). A durable queue, whose workers run the event elsewhere, needs none.
   */
  readonly platform?: ReplayPlatform;
}

/**
 * What a replay hands its event's run to: the shape of `receiver.fetch`'s platform (Workers' `ctx`).
 * @example
 * await receiver.replayDeadLetters({ type: 'leave.*' }, { platform: ctx });
 */
export interface ReplayPlatform {
  readonly waitUntil?: (promise: Promise<unknown>) => void;
}

/**
 * Refuses a replay's `platform` that could keep nothing alive, before any letter is touched.
 * @example
 * checkReplayPlatform(ctx); // returns for a Worker's ExecutionContext
 */
export function checkReplayPlatform(platform: unknown): asserts platform is ReplayPlatform | undefined {
  if (platform === undefined) return;
  // A function here is most likely `ctx.waitUntil` itself: it has no waitUntil, so nothing would be kept alive.
  const waitUntil: unknown =
    typeof platform === 'object' && platform !== null ? (platform as ReplayPlatform).waitUntil : platform;
  if (waitUntil === platform || (waitUntil !== undefined && typeof waitUntil !== 'function'))
    throw new ConfigurationError(
      `replay platform must be an object with a waitUntil function, e.g. { platform: ctx } on Workers, got ${waitUntil === platform ? shownValue(platform) : `a waitUntil that is ${shownValue(waitUntil)}`}`,
    );
}

/** Options of `EventQueue.discard`. */
export interface DiscardOptions {
  /** The letter's `failedAt` as read: a letter that failed again since then is not discarded. */
  readonly failedAt?: number;
}

// A given option in an error message: a number as written, anything else by its kind (never its content).
const shownNumber = (value: unknown): string => (typeof value === 'number' ? String(value) : typeof value);
// A given value's kind in an error message, null named as such.
const shownValue = (value: unknown): string => (value === null ? 'null' : typeof value);

/** Retry delay in milliseconds before attempt `attempt + 1`, given the attempt that just failed. */
export type Backoff = (attempt: number) => number;

/**
 * Exponential backoff with jitter: the ceiling doubles from `baseMs` up to `maxMs` (each 0 or more, else refused), the
 * delay is drawn from its upper half.
 * @example
 * createMemoryQueue({ backoff: exponentialBackoff({ baseMs: 500, maxMs: 60_000 }) });
 */
export function exponentialBackoff({
  baseMs = 1000,
  maxMs = 5 * 60_000,
}: {
  baseMs?: number;
  maxMs?: number;
} = {}): Backoff {
  // Checked here, where the mistake is made: a NaN (`Number(process.env.X)` unset) or a negative would otherwise
  // surface only at the first retry, as a delay the queue cannot use.
  if (!(typeof baseMs === 'number' && baseMs >= 0 && Number.isFinite(baseMs)))
    throw new ConfigurationError(
      `exponentialBackoff baseMs must be a number of milliseconds, 0 or more, e.g. 1000, got ${shownNumber(baseMs)}`,
    );
  if (!(typeof maxMs === 'number' && maxMs >= 0))
    throw new ConfigurationError(
      `exponentialBackoff maxMs must be a number of milliseconds, 0 or more, e.g. 300000, got ${shownNumber(maxMs)}`,
    );
  return (attempt) => {
    const ceiling = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1));
    return ceiling / 2 + Math.random() * (ceiling / 2);
  };
}

/**
 * The processor's failure: the errors of the handlers that failed and the indexes of those that succeeded.
 * @example
 * if (error instanceof HandlerFailure) error.completed;
 */
export class HandlerFailure extends AggregateError {
  readonly completed: readonly number[];

  constructor(errors: readonly unknown[], completed: readonly number[]) {
    super(errors, `workforce-webhooks: ${errors.length} handler(s) failed`);
    this.name = 'HandlerFailure';
    this.completed = completed;
  }
}
