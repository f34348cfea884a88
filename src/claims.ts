// The receiver's side of the dedupe store: marking done, releasing and keeping leases, never rejecting.
import type { Logger } from './logger.js';
import type { DedupeStore } from './store.js';

/** Claim bookkeeping after `store.claim`; every method logs its failures instead of rejecting. */
export interface Claims {
  /** Marks the id done for the dedupe window. */
  complete(id: string, token: string): Promise<void>;
  /** Gives the claim up, so the sender's retry can take it. */
  release(id: string, token: string): Promise<void>;
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
  return {
    // A failure to mark an id done is logged and never changes an answer: the event was accepted or processed.
    complete: (id, token) =>
      store.complete(id, token, doneTtlMs).then(
        (held) => {
          if (!held)
            logger.warn(
              { eventId: id },
              'workforce-webhooks: the claim expired before the event was marked done',
            );
        },
        (error) => {
          logger.error({ eventId: id, err: error }, 'workforce-webhooks: could not mark an event done');
        },
      ),
    release: (id, token) =>
      store.release(id, token).then(
        () => {},
        (error) => {
          logger.error({ eventId: id, err: error }, 'workforce-webhooks: could not release a claim');
        },
      ),
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
