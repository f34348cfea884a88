// Ordering keys held here: leases renewed while handlers run, and while a refused watermark write is retried.
import { WebhookError } from './errors.js';
import type { Logger } from './logger.js';
import type { OrderedAttempt } from './ordered-attempt.js';
import type { OrderingStore } from './ordering-store.js';

/** The runs holding a key here, by event id. */
export interface KeyLeases {
  /** The run of the event whose handlers run here, if any. */
  get(eventId: string): OrderedAttempt | undefined;
  /** Renews the run's lease every third of a lease until `done`. */
  keep(eventId: string, running: OrderedAttempt): void;
  /** The run's handlers settled: its lease is no longer renewed (a later run of the event is left alone). */
  done(eventId: string, running: OrderedAttempt): void;
}

/**
 * The events whose handlers run in this process: their leases are renewed every third of a lease, from one timer for
 * all of them (a timer per event costs more than the rest of its ordering work). A renewal that finds the lease taken
 * aborts the run's signal with `lease_lost`.
 * @example
 * const leases = keyLeases({ store, leaseMs, maxWaitMs, logger }); leases.keep(event.id, ordered);
 */
export function keyLeases({
  store,
  leaseMs,
  maxWaitMs,
  logger,
}: {
  readonly store: OrderingStore;
  readonly leaseMs: number;
  readonly maxWaitMs: number;
  readonly logger: Logger;
}): KeyLeases {
  const held = new Map<string, OrderedAttempt>();
  let renewing: ReturnType<typeof setInterval> | undefined;
  // Renews a run's lease only while the run still has it (live, or lapsed while nobody took the key).
  const renew = async (orderingKey: string, eventId: string, runId: string): Promise<boolean> =>
    store.renew(orderingKey, eventId, runId, leaseMs);
  const lost = (eventId: string, running: OrderedAttempt): void => {
    // A run that settled while this renewal was on its way (a pool may run the two out of order) needs nothing: a
    // renew-only step cannot take its key back.
    if (held.get(eventId) !== running) return;
    held.delete(eventId);
    logger.error(
      { eventId },
      'workforce-webhooks: the ordering key lease was lost to another event of the key (or a later attempt of this one) while handlers ran; their signal is aborted',
    );
    running.lose(
      new WebhookError(
        'lease_lost',
        "another event of this record took the key's lease (it lapsed); stop and leave the record to it",
      ),
    );
  };
  const renewAll = (): void => {
    if (held.size === 0) {
      clearInterval(renewing);
      renewing = undefined;
      return;
    }
    for (const [eventId, running] of held) {
      const { orderingKey } = running;
      // Handlers that outlived their aborted attempt (they ignore their signal) keep the key until about `maxWaitMs`
      // after they began (renewals a third of a lease apart), as a failing event would; then its lease lapses.
      running.renewals++;
      if (running.renewals * (leaseMs / 3) > maxWaitMs && running.aborted) {
        held.delete(eventId);
        continue;
      }
      Promise.resolve()
        .then(() => renew(orderingKey, eventId, running.run))
        .then(
          (renewed) => {
            if (!renewed) lost(eventId, running);
          },
          (error: unknown) =>
            logger.warn({ eventId, err: error }, 'workforce-webhooks: ordering lease renewal failed'),
        );
    }
  };
  return {
    get: (eventId) => held.get(eventId),
    keep(eventId, running) {
      held.set(eventId, running);
      if (renewing === undefined) {
        renewing = setInterval(renewAll, leaseMs / 3);
        renewing.unref?.();
      }
    },
    done(eventId, running) {
      if (held.get(eventId) === running) held.delete(eventId);
    },
  };
}

// The first retry of a watermark write, doubled at each failure up to the last (or a third of a lease, if shorter).
const FIRST_RETRY_MS = 250;
const LAST_RETRY_MS = 4000;

/**
 * Retries a `leave` that moves a key's watermark and that the store refused, with backoff, until it lands (then
 * `left`); each failed try renews the run's lease, so no older event of the key enters before the watermark is
 * written (spec rule 4). It gives up, logged once at error level, after `maxWaitMs`: as long as a failing event may
 * hold its key against newer ones. Its timers never keep the process alive.
 * @example
 * const retryLeave = leaveRetries({ store, leaseMs, maxWaitMs, ttlMs, logger, left: wake }); retryLeave(key, id, mark, run);
 */
export function leaveRetries({
  store,
  leaseMs,
  maxWaitMs,
  ttlMs,
  logger,
  left,
}: {
  readonly store: OrderingStore;
  readonly leaseMs: number;
  readonly maxWaitMs: number;
  readonly ttlMs: number;
  readonly logger: Logger;
  readonly left: (orderingKey: string) => void;
}): (orderingKey: string, eventId: string, mark: string, runId: string | undefined) => void {
  // Never longer apart than a renewal would be: the tries renew the lease, which must not lapse between them.
  const longest = Math.min(LAST_RETRY_MS, leaseMs / 3);
  return (orderingKey, eventId, mark, runId) => {
    let delay = Math.min(FIRST_RETRY_MS, longest);
    let waited = 0;
    const again = (): void => {
      // The compare-and-set moves the watermark only forward: a try that landed unseen is harmless to repeat.
      Promise.resolve()
        .then(() => store.leave(orderingKey, eventId, mark, ttlMs, runId))
        .then(() => left(orderingKey), failed);
    };
    const failed = (): void => {
      if (waited >= maxWaitMs) {
        logger.error(
          { eventId },
          "workforce-webhooks: gave up writing an ordering watermark after ordering.maxWaitMs (the store kept refusing it); the key's lease lapses, and an older event of the record may then run over this one",
        );
        left(orderingKey);
        return;
      }
      // The key stays the run's until the watermark is written. A renewal refused too is harmless: a store that
      // refuses writes refuses an older event's `enter` alike, and the next try renews again.
      if (runId !== undefined)
        Promise.resolve()
          .then(() => store.renew(orderingKey, eventId, runId, leaseMs))
          .catch(() => {});
      const timer = setTimeout(again, delay);
      timer.unref?.();
      waited += delay;
      delay = Math.min(delay * 2, longest);
    };
    failed();
  };
}
