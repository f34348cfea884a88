// The mock read API's rate limit: calls per key in a sliding window, on the mock's clock and on the process's own.

/** Counts each key's calls; `take` admits one or says how long to wait. */
export interface MockRateLimit {
  /** Counts the call and returns undefined when the key is under its limit, else the `Retry-After` in seconds. */
  take(key: string): number | undefined;
}

/** Options of `createMockRateLimit`. */
export interface MockRateLimitOptions {
  /** Calls a key may make per window, above 0. */
  readonly limit: number;
  readonly windowMs: number;
  /** The mock's clock, in milliseconds like `Date.now`: a test moves it to skip the wait. */
  readonly now: () => number;
  /** The process's own monotonic clock, in milliseconds. */
  readonly elapsed?: () => number;
}

/**
 * A sliding-window limit per key. A call leaves the window once a window has passed on either clock: the mock's
 * `now`, which a test moves forward to skip the minute, or the process's own, so a `now` held still for stable event
 * times does not refuse every call after the limit for ever. `Retry-After` is read on the mock's clock, never shorter
 * than the real wait and never longer than the window.
 * @example
 * const limit = createMockRateLimit({ limit: 300, windowMs: 60_000, now: Date.now }); limit.take(key) // undefined
 */
export function createMockRateLimit({
  limit,
  windowMs,
  now,
  elapsed = () => performance.now(),
}: MockRateLimitOptions): MockRateLimit {
  const calls = new Map<string, { readonly at: number; readonly since: number }[]>();
  return {
    take(key) {
      const at = now();
      const since = elapsed();
      const recent = (calls.get(key) ?? []).filter((c) => c.at > at - windowMs && c.since > since - windowMs);
      calls.set(key, recent);
      if (recent.length < limit) {
        recent.push({ at, since });
        return undefined;
      }
      // Never more than the window: a clock set back (a test making an older event) would add the step to the wait,
      // while the real clock lets the call through within one window.
      return Math.max(1, Math.ceil(Math.min(windowMs, recent[0]!.at + windowMs - at) / 1000));
    },
  };
}
