// The memory queue's options: what each means, its default, and the checks made when the queue is created.
import { ConfigurationError } from './errors.js';
import { type Backoff, exponentialBackoff } from './queue.js';
import { MAX_TIMER_MS } from './timer-limit.js';

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
   * jitter. A delay past 2^31 - 1 ms (about 24.8 days, the longest a timer waits) is cut to it. On Workers a retry
   * waits in a request (its event's, kept up by `waitUntil`): keep the backoff under the time `waitUntil` is allowed,
   * as a retry whose request the platform ends first becomes a dead letter (`queue_unavailable`), found one
   * `handlerTimeoutMs` past its due time once the queue next takes a turn.
   */
  readonly backoff?: Backoff;
  /**
   * One attempt's time limit; its `ctx.signal` is aborted then. One timer checks every attempt, so the abort
   * may come up to a quarter of the limit (at most 1 s) late; an event kept alive by its request's `waitUntil`
   * (Workers, Next's `after()`) times its attempts with a timer of its own, in that request. A handler that runs on,
   * ignoring its signal, keeps its slot of `concurrency` (and the `waitUntil` of its event) until it settles, at
   * most one more limit (then it is warned of, once). On Workers keep it under the time `waitUntil` is allowed: an
   * attempt whose request the platform ends under it is taken back one more limit past its own, its slot freed and
   * its event a dead letter (`queue_unavailable`), once the queue next takes a turn; the slot of a handler running on
   * past its cut there is freed likewise, two limits past the cut.
   * At most 2^31 - 1 (about 24.8 days, the longest a timer waits). Default 30 000.
   */
  readonly handlerTimeoutMs?: number;
  /** Dead letters kept; the oldest are dropped (and logged) past it. Default 10 000. */
  readonly maxDeadLetters?: number;
}

/**
 * The options with their defaults, checked: a mistake is refused when the queue is created, not at the first
 * delivery or retry.
 * @example
 * const { concurrency, backoff } = resolveMemoryQueueOptions({ concurrency: 20 });
 */
export function resolveMemoryQueueOptions(options: MemoryQueueOptions = {}): Required<MemoryQueueOptions> {
  if (typeof options !== 'object' || options === null)
    throw new ConfigurationError('createMemoryQueue options must be an object, e.g. { concurrency: 20 }');
  const {
    concurrency = 10,
    maxQueued = 10_000,
    attempts = 5,
    backoff = exponentialBackoff(),
    handlerTimeoutMs = 30_000,
    maxDeadLetters = 10_000,
  } = options;
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
  // "No limit" written as a huge number: an attempt that times itself (a job kept alive by waitUntil, or Next's
  // after()) would get a timer Node fires after 1 ms, and every attempt would be cut short at once.
  if (handlerTimeoutMs > MAX_TIMER_MS)
    throw new ConfigurationError(
      `queue handlerTimeoutMs must be a number of milliseconds above 0 and at most ${MAX_TIMER_MS} (about 24.8 days, the longest a timer waits), got ${handlerTimeoutMs}`,
    );
  // Checked here, not at the first retry: a backoff that is not a function would fail every retry for good.
  if (typeof backoff !== 'function')
    throw new ConfigurationError(
      `queue backoff must be a function from the failed attempt to a delay in ms, e.g. (attempt) => attempt * 1000, got ${typeof backoff}`,
    );
  return { concurrency, maxQueued, attempts, backoff, handlerTimeoutMs, maxDeadLetters };
}
