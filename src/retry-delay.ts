// The memory queue's delay before a retry: the app's backoff, made safe to give a timer.
import { ConfigurationError } from './errors.js';
import type { Logger } from './logger.js';
import type { Backoff } from './queue.js';
import { MAX_TIMER_MS } from './timer-limit.js';

/**
 * Returns the delay (ms) before the retry that follows a failed attempt: `backoff`'s, or 1 s when it throws or gives
 * no number (logged), cut to `MAX_TIMER_MS` past it (warned once), so that no retry is lost or fired at once.
 * @example
 * const delayOf = createRetryDelay(backoff); setTimeout(retry, delayOf(attempt, logger));
 */
export function createRetryDelay(backoff: Backoff): (attempt: number, logger: Logger) => number {
  // A backoff past the longest timer is logged once, not at every retry.
  let warnedLong = false;
  return (attempt, logger) => {
    let ms: number;
    try {
      ms = backoff(attempt);
      // NaN fails both tests; Infinity is a delay past the longest timer.
      if (!(typeof ms === 'number' && ms >= 0))
        throw new ConfigurationError(
          // A function back is the factory given for its result (`backoff: exponentialBackoff`): said with the fix,
          // and never its source text.
          typeof ms === 'function'
            ? 'the queue backoff returned a function, not a delay: give the queue a backoff, e.g. backoff: exponentialBackoff() (called), not backoff: exponentialBackoff'
            : `backoff returned ${typeof ms === 'number' ? String(ms) : typeof ms}, not a delay in milliseconds`,
        );
    } catch (error) {
      // A backoff that throws must not lose the job: it is retried after a default delay instead.
      logger.error({ err: error }, 'workforce-webhooks: the queue backoff failed; retrying in 1 s');
      return 1000;
    }
    // One past the longest timer would fire at once (Node's overflow), so it is cut to that longest timer.
    if (ms <= MAX_TIMER_MS) return ms;
    // A configuration mistake (seconds taken for milliseconds, say), told once rather than at every retry.
    if (!warnedLong) {
      warnedLong = true;
      logger.warn(
        { backoffMs: ms },
        `workforce-webhooks: the queue backoff returned more than ${MAX_TIMER_MS} ms (about 24.8 days, the longest a timer waits); retrying after ${MAX_TIMER_MS} ms instead: make backoff return milliseconds below that`,
      );
    }
    return MAX_TIMER_MS;
  };
}
