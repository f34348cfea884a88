// Giving an ordering key up: its watermark moved (written again while the store refuses it), or held after a failure.
import { isPromise } from './is-promise.js';
import type { Logger } from './logger.js';
import type { OrderedAttempt } from './ordered-attempt.js';
import type { KeyLeases } from './ordering-leases.js';
import type { LeaveRetries } from './ordering-leave-retries.js';
import type { OrderingStore } from './ordering-store.js';

/** How a run gives its key up, to the next event of the key or to its own next attempt. */
export interface KeyRelease {
  /**
   * Moves the key's watermark and gives the key up (the run's; any run of the event when none is named: a dead
   * letter); never rejects. `leaving`, the run that wrote the mark, holds the key here until the mark lands (tried
   * again while the store refuses it) or is given up. No promise when the store answers at once.
   */
  readonly leave: (
    orderingKey: string,
    eventId: string,
    mark: string | undefined,
    runId?: string,
    leaving?: OrderedAttempt,
  ) => Promise<void> | undefined;
  /** Holds the key for the event's next attempt, newer events waiting at most `maxWaitMs`; never rejects. */
  readonly hold: (orderingKey: string, eventId: string, runId: string) => Promise<void>;
}

/**
 * Makes the key's release, once per ordering: waiters of this process are woken whenever a key is given up here.
 * @example
 * const { leave, hold } = keyRelease({ store, held, retryLeave, wake, doneTtlMs, maxWaitMs, logger });
 */
export function keyRelease({
  store,
  held,
  retryLeave,
  wake,
  doneTtlMs,
  maxWaitMs,
  logger,
}: {
  readonly store: OrderingStore;
  readonly held: KeyLeases;
  readonly retryLeave: LeaveRetries;
  readonly wake: (orderingKey: string) => void;
  readonly doneTtlMs: number;
  readonly maxWaitMs: number;
  readonly logger: Logger;
}): KeyRelease {
  // The key given up here: by `leaving`, the run that wrote its mark, if any; waiters of this process look again.
  const release = (orderingKey: string, leaving: OrderedAttempt | undefined): void => {
    if (leaving !== undefined) held.done(leaving);
    wake(orderingKey);
  };

  const leave = (
    orderingKey: string,
    eventId: string,
    mark: string | undefined,
    runId?: string,
    leaving?: OrderedAttempt,
  ): Promise<void> | undefined => {
    const failed = (error: unknown): void => {
      // Handlers that outlived close() give their key up as they end, and the app may have closed the store's client
      // since, on purpose: then the lease lapses (the watermark unmoved, as after a crash), and nothing is said.
      if (held.closed) {
        release(orderingKey, leaving);
        return;
      }
      logger.error({ eventId, err: error }, 'workforce-webhooks: could not give up an ordering key');
      // Spec rule 4: a watermark not moved lets an older event of the record run over this one, so it is written
      // again, the key kept until then. Without a mark the key's lease just lapses by itself.
      if (mark !== undefined)
        retryLeave(orderingKey, eventId, mark, runId, () => release(orderingKey, leaving));
      else release(orderingKey, leaving);
    };
    let landed: boolean | Promise<boolean>;
    try {
      landed = store.leave(orderingKey, eventId, mark, doneTtlMs, runId);
    } catch (error) {
      failed(error);
      return undefined;
    }
    if (!isPromise(landed)) {
      release(orderingKey, leaving);
      return undefined;
    }
    return landed.then(() => release(orderingKey, leaving), failed);
  };

  const hold = async (orderingKey: string, eventId: string, runId: string): Promise<void> => {
    try {
      await store.hold(orderingKey, eventId, maxWaitMs, runId);
    } catch (error) {
      // After close(), as for `leave`: the lease lapses by itself.
      if (!held.closed)
        logger.error({ eventId, err: error }, 'workforce-webhooks: could not hold an ordering key');
    } finally {
      // Waiters look again: the hold may already have passed its bound.
      wake(orderingKey);
    }
  };

  return { leave, hold };
}
