// The client-side rate limit: at most `requests` per `intervalMs` per key (spec "Limits": 300 a minute).

/** The longest delay a timer takes: a longer one fires at once. */
export const MAX_TIMER_MS: number = 2 ** 31 - 1;

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
  /**
   * Limiters with the same scope and the same clock share their slots, in this process: the client passes its
   * key and base URL, so every client of one key counts against one limit. Default: a limiter of its own.
   */
  readonly scope?: string;
}

/** Call once the answer has come (or the request failed): the slot then stays taken for one more interval. */
export type Release = () => void;

/** Hands out request slots; `acquire` resolves when one is free. */
export interface RateLimiter {
  acquire(signal?: AbortSignal): Promise<Release>;
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

/** The slots of one scope: requests in flight, and when the finished ones finished (oldest first). */
interface Slots {
  inFlight: number;
  /** On the limiter's clock, `now`. */
  readonly finished: number[];
  /** The same moments on the process's monotonic clock, `performance.now()`. */
  readonly finishedElapsed: number[];
  /** Waiters to wake when a request in flight finishes. */
  readonly waiters: Set<() => void>;
}

const newSlots = (): Slots => ({ inFlight: 0, finished: [], finishedElapsed: [], waiters: new Set() });

// Keyed by the clock first: times taken on one clock mean nothing on another (a test's injected one).
const shared = new WeakMap<() => number, Map<string, Slots>>();

function slotsOf(scope: string, now: () => number): Slots {
  const scopes = shared.get(now) ?? new Map<string, Slots>();
  shared.set(now, scopes);
  const slots = scopes.get(scope) ?? newSlots();
  scopes.set(scope, slots);
  return slots;
}

/**
 * A sliding-window limiter: a request waits until fewer than `requests` were in flight or finished in the last
 * `intervalMs`. A request counts from when it is sent until one interval after its answer: the service counts
 * it when it arrives, somewhere in between, so it never sees more than `requests` in any interval.
 * @example
 * const limiter = createRateLimiter(); const release = await limiter.acquire(); try { await fetch(url); } finally { release(); }
 */
export function createRateLimiter({
  requests = 300,
  intervalMs = 60_000,
  now = Date.now,
  sleep: wait = sleep,
  scope,
}: RateLimiterOptions = {}): RateLimiter {
  // A limit of no requests (0, NaN) or an interval that is not a time would make every call wait for ever; and a
  // timer past 2^31 - 1 ms fires at once, which would turn the wait for a slot into a busy loop.
  if (!Number.isSafeInteger(requests) || requests < 1) {
    throw new TypeError(
      `workforce-webhooks: rateLimit.requests must be a whole number, 1 or more (got ${String(requests)}); pass rateLimit: false for no limit`,
    );
  }
  if (!Number.isFinite(intervalMs) || intervalMs <= 0 || intervalMs > MAX_TIMER_MS) {
    throw new TypeError(
      `workforce-webhooks: rateLimit.intervalMs must be a number of milliseconds over 0 and at most ${MAX_TIMER_MS} (got ${String(intervalMs)})`,
    );
  }
  const slots = scope === undefined ? newSlots() : slotsOf(scope, now);
  return {
    async acquire(signal) {
      for (;;) {
        signal?.throwIfAborted();
        const at = now();
        // A time after now means the clock stepped back (an NTP correction, a restored VM): count those requests
        // as answered now, so the wait for a slot stays within one interval instead of growing by the step. Times
        // are oldest first: this stops at the first one not in the future, one comparison in the usual case.
        for (let i = 0; i < slots.finished.length && slots.finished[i]! > at; i++) slots.finished[i] = at;
        // A request leaves the window once an interval has passed on either clock: `now` (a test moves it to skip the
        // wait) or real time, so a `now` held still (a test's fixed clock) waits one interval, not for ever.
        const elapsed = performance.now();
        while (
          slots.finished.length > 0 &&
          (slots.finished[0]! + intervalMs <= at || slots.finishedElapsed[0]! + intervalMs <= elapsed)
        ) {
          slots.finished.shift();
          slots.finishedElapsed.shift();
        }
        if (slots.inFlight + slots.finished.length < requests) {
          slots.inFlight++;
          let released = false;
          return () => {
            if (released) return;
            released = true;
            slots.inFlight--;
            slots.finished.push(now());
            slots.finishedElapsed.push(performance.now());
            for (const wake of slots.waiters) wake();
          };
        }
        // Wait for the oldest finished request to leave the window, or for one in flight to finish.
        const woken = new AbortController();
        const wake = (): void => woken.abort();
        slots.waiters.add(wake);
        const either = signal === undefined ? woken.signal : AbortSignal.any([signal, woken.signal]);
        try {
          const oldest = slots.finished[0];
          await (oldest === undefined ? aborted(either) : wait(oldest + intervalMs - at, either));
        } catch (error) {
          if (signal?.aborted) throw signal.reason;
          if (!woken.signal.aborted) throw error;
        } finally {
          slots.waiters.delete(wake);
        }
      }
    },
  };
}

/** Rejects when `signal` aborts: every slot is in flight, so only an answer (or the caller) can end the wait. */
function aborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}
