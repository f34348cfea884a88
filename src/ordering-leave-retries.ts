// A watermark write the store refused, tried again with backoff while the key's lease is renewed (spec rule 4).
import type { Logger } from './logger.js';
import type { OrderingStore } from './ordering-store.js';

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
  let closed = false;
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
    // From the first refusal on, each try's own time included: a silent store makes each try last its deadline.
    const began = performance.now();
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
      // Closed: `settled` said which writes did not land, and the app may have closed the store's client since.
      if (closed) {
        ended();
        return;
      }
      // The compare-and-set moves the watermark only forward: a try that landed unseen is harmless to repeat.
      Promise.resolve()
        .then(() => store.leave(orderingKey, eventId, mark, ttlMs, runId))
        .then(ended, failed);
    };
    const failed = (): void => {
      if (closed) {
        ended();
        return;
      }
      const waited = performance.now() - began;
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
      const timer = setTimeout(again, Math.min(delay, maxWaitMs - waited));
      timer.unref?.();
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
  const close = (): void => {
    closed = true;
  };
  return Object.assign(retry, { settled, close });
}

/** Retries of refused watermark writes, and a wait for the ones still tried. */
export interface LeaveRetries {
  (orderingKey: string, eventId: string, mark: string, runId: string | undefined, left: () => void): void;
  /** Resolves once no write is tried any more, or after `timeoutMs` (then logged at error level). */
  settled(timeoutMs: number): Promise<void>;
  /** The receiver closed: the writes still tried stop at their next try, and their keys' leases lapse. */
  close(): void;
}
