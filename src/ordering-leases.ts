// Ordering keys held here: leases renewed while handlers run, and while a refused watermark write is retried.
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
          (error: unknown) =>
            logger.warn({ eventId, err: error }, 'workforce-webhooks: ordering lease renewal failed'),
        );
    }
  };
  return {
    get: (orderingKey) => held.get(orderingKey),
    keep(running) {
      held.set(running.orderingKey, running);
      if (renewing === undefined) {
        renewing = setInterval(renewAll, leaseMs / 3);
        renewing.unref?.();
      }
    },
    done(running) {
      if (held.get(running.orderingKey) === running) held.delete(running.orderingKey);
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
 * hold its key against newer ones (then `left` too). Its timers never keep the process alive; `settled` lets a
 * closing receiver wait for the writes still tried.
 * @example
 * const retryLeave = leaveRetries({ store, leaseMs, maxWaitMs, ttlMs, logger }); retryLeave(key, id, mark, run, left);
 */
export function leaveRetries({
  store,
  leaseMs,
  maxWaitMs,
  ttlMs,
  logger,
}: {
  readonly store: OrderingStore;
  readonly leaseMs: number;
  readonly maxWaitMs: number;
  readonly ttlMs: number;
  readonly logger: Logger;
}): LeaveRetries {
  // Never longer apart than a renewal would be: the tries renew the lease, which must not lapse between them.
  const longest = Math.min(LAST_RETRY_MS, leaseMs / 3);
  let pending = 0;
  let wakeSettled: (() => void) | undefined;
  let allSettled: Promise<void> | undefined;
  const retry = (
    orderingKey: string,
    eventId: string,
    mark: string,
    runId: string | undefined,
    left: () => void,
  ): void => {
    let delay = Math.min(FIRST_RETRY_MS, longest);
    let waited = 0;
    pending += 1;
    const ended = (): void => {
      pending -= 1;
      if (pending === 0) {
        wakeSettled?.();
        wakeSettled = undefined;
        allSettled = undefined;
      }
      left();
    };
    const again = (): void => {
      // The compare-and-set moves the watermark only forward: a try that landed unseen is harmless to repeat.
      Promise.resolve()
        .then(() => store.leave(orderingKey, eventId, mark, ttlMs, runId))
        .then(ended, failed);
    };
    const failed = (): void => {
      if (waited >= maxWaitMs) {
        logger.error(
          { eventId },
          "workforce-webhooks: gave up writing an ordering watermark after ordering.maxWaitMs (the store kept refusing it); the key's lease lapses, and an older event of the record may then run over this one",
        );
        ended();
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
  const settled = async (timeoutMs: number): Promise<void> => {
    if (pending === 0) return;
    allSettled ??= new Promise<void>((resolve) => {
      wakeSettled = resolve;
    });
    // A timer that keeps the process alive: the writes' own timers do not, and a closing app must see them land.
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<boolean>((resolve) => {
      if (Number.isFinite(timeoutMs)) timer = setTimeout(() => resolve(true), timeoutMs);
    });
    const late = await Promise.race([allSettled.then(() => false), timedOut]);
    clearTimeout(timer);
    if (late)
      logger.error(
        { pending },
        "workforce-webhooks: closed while ordering watermark writes were still refused by the store; their keys' leases lapse, and an older event of those records may then run over a newer one",
      );
  };
  return Object.assign(retry, { settled });
}

/** Retries of refused watermark writes, and a wait for the ones still tried. */
export interface LeaveRetries {
  (orderingKey: string, eventId: string, mark: string, runId: string | undefined, left: () => void): void;
  /** Resolves once no write is tried any more, or after `timeoutMs` (then logged at error level). */
  settled(timeoutMs: number): Promise<void>;
}
