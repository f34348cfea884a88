// Ordering keys held here: their leases renewed while handlers run, and no other run of the key started meanwhile.
import { WebhookError } from './errors.js';
import type { Logger } from './logger.js';
import type { OrderedAttempt } from './ordered-attempt.js';
import type { OrderingStore } from './ordering-store.js';

/**
 * The runs holding a key in this process, by key: while one is here, no other event of its key starts here, whatever
 * the store says (its lease may have lapsed while the store refused the renewals).
 */
export interface KeyLeases {
  /** The run holding the key here (its handlers run, or its watermark is being written), if any. */
  get(orderingKey: string): OrderedAttempt | undefined;
  /** Renews the run's lease every third of a lease until it is `done` or `leaving`. */
  keep(running: OrderedAttempt): void;
  /** The run gave the key up (or held it after a failure): a later run of its key is left alone. */
  done(running: OrderedAttempt): void;
  /** The receiver closed: no lease is renewed any more (the app may close the store's client); each lapses. */
  close(): void;
  /** True once `close` was called: a store failure is then expected, and not logged. */
  readonly closed: boolean;
}

/**
 * The keys whose events run in this process: their leases are renewed every third of a lease, from one timer for
 * all of them (a timer per event costs more than the rest of its ordering work). A renewal that finds the lease taken
 * aborts the run's signal with `lease_lost`.
 * @example
 * const leases = keyLeases({ store, leaseMs, maxWaitMs, logger }); leases.keep(ordered);
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
  let closed = false;
  // Renews a run's lease only while the run still has it (live, or lapsed while nobody took the key).
  const renew = async (orderingKey: string, eventId: string, runId: string): Promise<boolean> =>
    store.renew(orderingKey, eventId, runId, leaseMs);
  const lost = (running: OrderedAttempt): void => {
    // A run that settled or is leaving while this renewal was on its way (a pool may run the two out of order) needs
    // nothing: a renew-only step cannot take its key back.
    if (held.get(running.orderingKey) !== running || running.leaving) return;
    held.delete(running.orderingKey);
    logger.error(
      { eventId: running.eventId },
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
    for (const [orderingKey, running] of held) {
      // A run writing its watermark renews its lease at each try of the write.
      if (running.leaving) continue;
      const { eventId } = running;
      // Handlers that outlived their aborted attempt (they ignore their signal) keep the key until about `maxWaitMs`
      // after they began (renewals a third of a lease apart), as a failing event would; then its lease lapses.
      running.renewals++;
      if (running.renewals * (leaseMs / 3) > maxWaitMs && running.aborted) {
        held.delete(orderingKey);
        continue;
      }
      Promise.resolve()
        .then(() => renew(orderingKey, eventId, running.run))
        .then(
          (renewed) => {
            if (!renewed) lost(running);
          },
          (error: unknown) => {
            // One sent just before the close may fail once the app closed the client: nothing to say then.
            if (!closed)
              logger.warn({ eventId, err: error }, 'workforce-webhooks: ordering lease renewal failed');
          },
        );
    }
  };
  return {
    get: (orderingKey) => held.get(orderingKey),
    keep(running) {
      if (closed) return;
      held.set(running.orderingKey, running);
      if (renewing === undefined) {
        renewing = setInterval(renewAll, leaseMs / 3);
        renewing.unref?.();
      }
    },
    done(running) {
      if (held.get(running.orderingKey) === running) held.delete(running.orderingKey);
    },
    // Handlers that ignore their signal may run on past close(), after which the app closes the store's client:
    // renewing through it would fail, logged every third of a lease. Their leases lapse, and another instance takes
    // the keys then (the guarantee a crash gives too); they still give their keys up as they end (not logged).
    close() {
      closed = true;
      held.clear();
      clearInterval(renewing);
      renewing = undefined;
    },
    get closed() {
      return closed;
    },
  };
}
