// One interval timer that enforces the time limits of many attempts, and lets go of handlers that outlive them.

/** What a `Watchdog` watches: something with a deadline (`performance.now()` time) and what to do past it. */
export interface Watched {
  readonly deadline: number;
  expire(): void;
}

/**
 * Aborts the attempts it watches once they pass their limit (and lets go of the handlers of those cut short one
 * limit later), from one interval timer for all of them. Per delivery, a timer of its own costs more than the rest
 * of the attempt (libuv re-arms on every change); the price is precision: an attempt is aborted up to a quarter of
 * its limit (at most 1 s) late.
 * @example
 * const watchdog = new Watchdog(30_000); startAttempt(process, job, { attempt: 1, timeoutMs: 30_000, watchdog });
 */
export class Watchdog {
  readonly #everyMs: number;
  readonly #watched = new Set<Watched>();
  // Attempts cut short whose handlers still run: watched for one more limit, without keeping the process alive.
  readonly #runaways = new Set<Watched>();
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(timeoutMs: number) {
    this.#everyMs = Math.max(1, Math.min(1000, Math.floor(timeoutMs / 4)));
  }

  /** Watches `attempt` until it ends. */
  watch(attempt: Watched): void {
    this.#watched.add(attempt);
    if (this.#timer === undefined) this.#timer = setInterval(() => this.#sweep(), this.#everyMs);
    // Workers' (and browsers') timers are numbers, with no ref/unref: a call would throw, and the attempt whose
    // start or end made it would never end, holding its queue slot for good.
    else if (this.#watched.size === 1) this.#timer.ref?.();
  }

  /** Watches the handlers of `attempt`, cut short, until they settle or their new `deadline` passes. */
  watchRunaway(attempt: Watched): void {
    this.#runaways.add(attempt);
    if (this.#timer !== undefined) return;
    this.#timer = setInterval(() => this.#sweep(), this.#everyMs);
    if (this.#watched.size === 0) this.#timer.unref?.();
  }

  /** Stops watching the handlers of `attempt`. */
  forgetRunaway(attempt: Watched): void {
    this.#runaways.delete(attempt);
  }

  /** Stops watching `attempt`. */
  forget(attempt: Watched): void {
    this.#watched.delete(attempt);
    // Idle: the timer no longer keeps the process alive, and the next sweep stops it. It is not stopped here,
    // because a queue that empties between deliveries would then set a new timer for every one.
    if (this.#watched.size === 0) this.#timer?.unref?.();
  }

  #sweep(): void {
    if (this.#watched.size === 0 && this.#runaways.size === 0) {
      clearInterval(this.#timer);
      this.#timer = undefined;
      return;
    }
    const now = performance.now();
    for (const attempt of this.#watched) {
      if (attempt.deadline <= now) attempt.expire();
    }
    for (const attempt of this.#runaways) if (attempt.deadline <= now) attempt.expire();
  }
}
