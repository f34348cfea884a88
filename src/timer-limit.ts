// The longest delay a timer keeps: past it Node fires at once (a TimeoutOverflowWarning), so a limit that long is none.

/**
 * The largest delay `setTimeout` and `setInterval` honour, in milliseconds (2^31 - 1, about 24.8 days).
 * @example
 * if (ms > MAX_TIMER_MS) throw new ConfigurationError(`handlerTimeoutMs must be at most ${MAX_TIMER_MS}`);
 */
export const MAX_TIMER_MS: number = 2 ** 31 - 1;
