// The client-side rate limit: at most `requests` per `intervalMs` per key (spec "Limits": 300 a minute).

/** Waits `ms` milliseconds, or rejects with the signal's reason when it is aborted first. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** Options of `createRateLimiter`. */
export interface RateLimiterOptions {
  /** Default 300 (spec "Limits"). */
  readonly requests?: number;
  /** Default 60 000 (a minute). */
  readonly intervalMs?: number;
  /** The clock, in milliseconds like `Date.now`. */
  readonly now?: () => number;
  readonly sleep?: Sleep;
}

/** Hands out request slots; `acquire` resolves when one is free. */
export interface RateLimiter {
  acquire(signal?: AbortSignal): Promise<void>;
}

/**
 * A timer-based `Sleep` that honours an `AbortSignal`.
 * @example
 * await sleep(1000, ctx.signal);
 */
export const sleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/**
 * A sliding-window limiter: a request waits until fewer than `requests` were sent in the last `intervalMs`.
 * @example
 * const limiter = createRateLimiter(); await limiter.acquire();
 */
export function createRateLimiter({
  requests = 300,
  intervalMs = 60_000,
  now = Date.now,
  sleep: wait = sleep,
}: RateLimiterOptions = {}): RateLimiter {
  // Send times of the last `requests` requests, oldest first.
  const sent: number[] = [];
  return {
    async acquire(signal) {
      for (;;) {
        const at = now();
        while (sent.length > 0 && sent[0]! <= at - intervalMs) sent.shift();
        if (sent.length < requests) {
          sent.push(at);
          return;
        }
        await wait(sent[0]! + intervalMs - at, signal);
      }
    },
  };
}
