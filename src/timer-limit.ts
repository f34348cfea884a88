// The longest delay a timer keeps: past it Node fires at once (a TimeoutOverflowWarning), so a limit that long is none.
import { ConfigurationError } from './errors.js';

/**
 * The largest delay `setTimeout` and `setInterval` honour, in milliseconds (2^31 - 1, about 24.8 days).
 * @example
 * if (ms > MAX_TIMER_MS) throw new ConfigurationError(`handlerTimeoutMs must be at most ${MAX_TIMER_MS}`);
 */
export const MAX_TIMER_MS: number = 2 ** 31 - 1;

/**
 * Why a `close({ timeoutMs })` cannot be taken, or undefined when it can: 0 to `MAX_TIMER_MS`, or `Infinity` to wait
 * with no limit. A timer given NaN or more than `MAX_TIMER_MS` fires at once, and would cut every running event short.
 * @example
 * const refused = closeTimeoutProblem(timeoutMs, 'close'); if (refused) return Promise.reject(refused);
 */
export function closeTimeoutProblem(timeoutMs: unknown, what: string): ConfigurationError | undefined {
  if (timeoutMs === Number.POSITIVE_INFINITY) return undefined;
  if (typeof timeoutMs === 'number' && timeoutMs >= 0 && timeoutMs <= MAX_TIMER_MS) return undefined;
  return new ConfigurationError(
    `${what} timeoutMs must be a number of milliseconds from 0 to ${MAX_TIMER_MS}, or Infinity to wait with no limit, got ${typeof timeoutMs === 'number' ? timeoutMs : typeof timeoutMs}`,
  );
}
