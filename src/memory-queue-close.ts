// How long the memory queue's close() waits, and when it gives up what is left to onDeadLetter.

/** What `drain` needs of the queue it closes. */
export interface Draining {
  /** Resolves when nothing is left: no job queued, running or retrying, no onDeadLetter call in flight. */
  readonly idle: Promise<void>;
  /** Gives up at once the retries due at or after `at` (a `performance.now()` time): they could not start in time. */
  giveUpFrom(at: number): void;
  /** The wait is over: aborts what runs, hands what waits to onDeadLetter; true when nothing at all is left. */
  abandon(): boolean;
}

/**
 * Waits for the queue's jobs and its onDeadLetter calls in flight. Its last fifth (at most 1 s) is kept for the
 * onDeadLetter calls of what is left then (nothing is dropped silently); whatever still runs at `timeoutMs` is not
 * waited for. With Infinity, it waits for the drain however long it takes, and sets no timer.
 * @example
 * await drain(10_000, { idle, giveUpFrom: (at) => giveUpRetriesFrom(at), abandon: () => abandonAll() });
 */
export async function drain(timeoutMs: number, { idle, giveUpFrom, abandon }: Draining): Promise<void> {
  const reserveMs = Math.min(1000, timeoutMs / 5);
  // A retry whose backoff ends past the wait would only be given up then: it is given up now, so that close()
  // ends as soon as nothing left can finish in time instead of waiting out its whole window for it.
  giveUpFrom(performance.now() + timeoutMs - reserveMs);
  if (timeoutMs === Number.POSITIVE_INFINITY) {
    await idle;
    return;
  }
  const idled = idle.then(() => 'idle' as const);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const until = (ms: number): Promise<'idle' | 'timeout'> =>
    Promise.race([
      idled,
      new Promise<'timeout'>((resolve) => {
        timer = setTimeout(resolve, ms, 'timeout');
      }),
    ]);
  if ((await until(timeoutMs - reserveMs)) === 'timeout' && !abandon()) await until(reserveMs);
  clearTimeout(timer);
}
