// The receiver's side of the dedupe store: marking done, releasing and keeping leases, never rejecting.
import type { Logger } from './logger.js';
import type { DedupeStore } from './store.js';
import { type SyncStore, syncFace } from './sync.js';

/** Claim bookkeeping after `store.claim`; every method logs its failures instead of rejecting. */
export interface Claims {
  /** Marks the id done for the dedupe window; undefined when that is already done (an in-process store). */
  complete(id: string, token: string): Promise<void> | undefined;
  /** Gives the claim up, so the sender's retry can take it; undefined when that is already done. */
  release(id: string, token: string): Promise<void> | undefined;
  /** Renews the lease every third of it until the returned function is called. */
  keep(id: string, token: string): () => void;
}

/**
 * Wraps a store with the receiver's lease and done windows.
 * @example
 * const claims = createClaims({ store, logger, leaseMs: 30_000, doneTtlMs: DEFAULT_DONE_TTL_MS });
 */
export function createClaims({
  store,
  logger,
  leaseMs,
  doneTtlMs,
}: {
  readonly store: DedupeStore;
  readonly logger: Logger;
  readonly leaseMs: number;
  readonly doneTtlMs: number;
}): Claims {
  const sync = syncFace<SyncStore>(store);
  const expired = (held: boolean, id: string): void => {
    if (!held)
      logger.warn({ eventId: id }, 'workforce-webhooks: the claim expired before the event was marked done');
  };
  const notMarked = (error: unknown, id: string): void => {
    logger.error({ eventId: id, err: error }, 'workforce-webhooks: could not mark an event done');
  };
  const notReleased = (error: unknown, id: string): void => {
    logger.error({ eventId: id, err: error }, 'workforce-webhooks: could not release a claim');
  };

  return {
    // A failure to mark an id done is logged and never changes an answer: the event was accepted or processed.
    complete(id, token) {
      if (sync === undefined) {
        return settle(() => store.complete(id, token, doneTtlMs)).then(
          (held) => expired(held, id),
          (error) => notMarked(error, id),
        );
      }
      try {
        expired(sync.complete(id, token, doneTtlMs), id);
      } catch (error) {
        notMarked(error, id);
      }
      return undefined;
    },
    release(id, token) {
      if (sync === undefined) {
        return settle(() => store.release(id, token)).then(
          () => {},
          (error) => notReleased(error, id),
        );
      }
      try {
        sync.release(id, token);
      } catch (error) {
        notReleased(error, id);
      }
      return undefined;
    },
    keep(id, token) {
      const timer = setInterval(() => {
        store
          .renew(id, token, leaseMs)
          .catch((error) =>
            logger.warn({ eventId: id, err: error }, 'workforce-webhooks: lease renewal failed'),
          );
      }, leaseMs / 3);
      return () => clearInterval(timer);
    },
  };
}

// A store of the user's may throw instead of rejecting, or answer with any thenable: both become a promise.
function settle<T>(call: () => T | PromiseLike<T>): Promise<T> {
  return new Promise<T>((resolve) => resolve(call()));
}
