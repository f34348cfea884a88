// The times the mock gives its events: never two the same, so every event of a record is newer than the last.

/**
 * A source of event times from `now`: each later than the one before while the clock goes forward, one millisecond
 * later when the clock has not moved (events of one tick, a fixed test clock); a clock set back is followed as is,
 * so a test can still make an older event on purpose. Spec rule 4: a receiver orders a record's events by
 * `occurredAt`, and a tie cannot be ordered.
 * @example
 * const eventTime = createEventClock(() => fixed); eventTime() < eventTime() // true
 */
export function createEventClock(now: () => number): () => string {
  let lastClock = Number.NEGATIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  return () => {
    const clock = now();
    last = clock < lastClock ? clock : Math.max(clock, last + 1);
    lastClock = clock;
    return new Date(last).toISOString();
  };
}
