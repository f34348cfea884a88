// The receiver's deadline on each ordering step of a store that can stall: a silent Redis or Postgres holds no run.

import { WebhookError } from './errors.js';
import type { KeyEntry, OrderingStore } from './ordering-store.js';
import { Watchdog, type Watched } from './watchdog.js';

/**
 * The store's ordering with each call rejected (`store_unavailable`) once `timeoutMs` pass without an answer,
 * whatever its client does. What follows a missed deadline is the caller's, as for a refusal: a watermark write is
 * tried again (the key kept), a renewal counts as failed, a hold lets its lease lapse. An `enter` that lands after
 * its deadline is given up at once, so no run that is not there keeps the key for a lease.
 * @example
 * const store = withOrderingDeadline(redisStore.ordering!, 2000);
 */
export function withOrderingDeadline(store: OrderingStore, timeoutMs: number): OrderingStore {
  // One interval timer for every step in flight (the queue's Watchdog): a timer per step would cost more than the
  // step's own work (libuv re-arms on every change). The price: a step is given up at most a quarter of the
  // deadline (and 1 s) late.
  const watchdog = new Watchdog(timeoutMs);
  const bound = <T>(call: () => T | Promise<T>, expired?: (pending: Promise<T>) => void): Promise<T> => {
    let pending: Promise<T>;
    try {
      pending = Promise.resolve(call());
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise<T>((resolve, reject) => {
      let open = true;
      const step: Watched = {
        deadline: performance.now() + timeoutMs,
        expire: () => {
          if (!open) return;
          open = false;
          watchdog.forget(step);
          reject(new WebhookError('store_unavailable', `no answer within ${timeoutMs} ms`));
          expired?.(pending);
        },
      };
      watchdog.watch(step);
      const settle = (): boolean => {
        if (!open) return false;
        open = false;
        watchdog.forget(step);
        return true;
      };
      pending.then(
        (value) => {
          if (settle()) resolve(value);
        },
        (error: unknown) => {
          if (settle()) reject(error);
        },
      );
    });
  };
  // Nobody waits for the entry any more: a late one is left at once (no mark), and a failure then is the lease's.
  // Sent once its answer came, so behind it on the client's connection.
  const leaveLate =
    (key: string, owner: string, run: string | undefined) =>
    (pending: Promise<KeyEntry>): void => {
      if (run === undefined) return; // without a run, a leave would give up whatever run of the owner has the key
      pending
        .then((entry) =>
          entry.status === 'entered' ? store.leave(key, owner, undefined, 1, run) : undefined,
        )
        .catch(() => {});
    };
  return {
    enter: (key, owner, leaseMs, run) =>
      bound(() => store.enter(key, owner, leaseMs, run), leaveLate(key, owner, run)),
    hold: (key, owner, maxWaitMs, run) => bound(() => store.hold(key, owner, maxWaitMs, run)),
    leave: (key, owner, mark, ttlMs, run) => bound(() => store.leave(key, owner, mark, ttlMs, run)),
    watermark: (key) => bound(() => store.watermark(key)),
    renew: (key, owner, run, leaseMs) => bound(() => store.renew(key, owner, run, leaseMs)),
  };
}
