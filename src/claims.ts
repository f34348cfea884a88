// The receiver's side of the dedupe store: marking done, releasing and keeping leases, never rejecting.
import { withDeadline } from './deadline.js';
import { WebhookError } from './errors.js';
import type { Logger } from './logger.js';
import type { ClaimResult, DedupeStore } from './store.js';

/** The receiver's claims: `claim` answers or rejects; the bookkeeping after it logs its failures instead. */
export interface Claims {
  /**
   * Claims the id for a lease (ordering on: with the watermark of `orderingKey`, in the same store step). Rejects
   * with `store_unavailable` past the deadline; a claim that lands after it is given up at once. May throw
   * synchronously (a store's own bug).
   */
  claim(id: string, orderingKey: string | undefined): Promise<ClaimResult>;
  /**
   * How long the claim that gave `token` took to answer (ms), when that was long enough to count (50 ms or more),
   * else 0; asked once, then forgotten (as on the claim's done mark or release).
   */
  took(token: string): number;
  /**
   * What a failed claim means, as the store reads it (`DedupeStore.explain`): `error` itself when it has no reading,
   * or when its reading throws.
   */
  explain(error: unknown): unknown;
  /** Marks the id done for the dedupe window. */
  complete(id: string, token: string): Promise<void>;
  /** Gives the claim up, so the sender's retry can take it. */
  release(id: string, token: string): Promise<void>;
  /**
   * Renews the lease a third of it after it was last written (`since`, `performance.now()` time: when the call that
   * wrote it was sent; else from now), and at once with `now`, until the returned function is called; a failed
   * renewal is tried again a sixth of it after it was sent. A renewal that finds the claim taken by another delivery
   * stops, logs at error level and calls `lost` with a `lease_lost` error. A `complete` or `release` of the claim is
   * sent once the renewal in flight (if any) has landed.
   */
  keep(
    id: string,
    token: string,
    lost: (reason: WebhookError) => void,
    now?: boolean,
    since?: number,
  ): () => void;
  /**
   * Resolves once no claim, done mark or release is in flight, each bounded by the deadline; a call that starts
   * another as it ends (a claim that lands after close began, and its release) is waited for too.
   */
  settled(): Promise<void>;
}

// A claim answered faster than this (ms) is not remembered: its time is within the answer's margins.
const SLOW_CLAIM_MS = 50;

/**
 * Wraps a store with the receiver's lease and done windows and its deadline on every store call.
 * @example
 * const claims = createClaims({ store, logger, leaseMs: 30_000, doneTtlMs: DEFAULT_DONE_TTL_MS, timeoutMs: 2000 });
 */
export function createClaims({
  store,
  logger,
  leaseMs,
  doneTtlMs,
  timeoutMs,
}: {
  readonly store: DedupeStore;
  readonly logger: Logger;
  readonly leaseMs: number;
  readonly doneTtlMs: number;
  /** A store call not answered by then is given up on (and logged); it may still land later. */
  readonly timeoutMs: number;
}): Claims {
  const expired = (held: boolean, id: string): void => {
    // The handlers ran, but the id is not marked done: a redelivery of it would run them again.
    if (!held)
      logger.error(
        { eventId: id },
        'workforce-webhooks: the claim was gone when the event was marked done (its lease lapsed and another delivery took it, or it was released)',
      );
  };
  const notMarked = (error: unknown, id: string): void => {
    logger.error({ eventId: id, err: error }, 'workforce-webhooks: could not mark an event done');
  };
  const notReleased = (error: unknown, id: string): void => {
    logger.error({ eventId: id, err: error }, 'workforce-webhooks: could not release a claim');
  };
  // The calls in flight to a store that can stall, for `settled`: close() waits for them, so the done marks and
  // releases of the last runs are sent before the user closes the store's client. One counter, no promise per call.
  let inFlight = 0;
  let wake: (() => void) | undefined;
  const ended = (): void => {
    inFlight--;
    if (inFlight === 0) wake?.();
  };
  // The time of the claims that answered slowly, by token, until asked (an inline run's answer deadline counts from
  // the claim: the sender's 10 s started before it) or their claim ends. Empty while the store answers promptly.
  const slowClaims = new Map<string, number>();
  const claimEnded = (result?: ClaimResult, tookMs = 0): void => {
    ended();
    if (tookMs >= SLOW_CLAIM_MS && result?.status === 'claimed') slowClaims.set(result.token, tookMs);
  };
  const forgetSlow = (token: string): void => {
    if (slowClaims.size > 0) slowClaims.delete(token);
  };
  // A store that cannot stall (in process) is called as it is: a deadline would only cost its timer and promises.
  const call: <T>(run: () => Promise<T>) => Promise<T> = store.inProcess
    ? (run) => run()
    : (run) => {
        inFlight++;
        return withDeadline(run, timeoutMs, 'store_unavailable', undefined, ended);
      };

  // The renewal each kept claim has in flight, by event id: a release or done mark of that claim is sent once it
  // landed, never beside it. Sent beside it, it could land first (Redis sends a script it lost from its cache again
  // behind the commands issued meanwhile; Postgres runs them on two connections), and the renewal would then take a
  // released id back and hold off the sender's retry for a whole lease. Waited for in the call's own deadline.
  const renewing = new Map<string, { readonly token: string; readonly landed: Promise<unknown> }>();
  const afterRenewal = <T>(id: string, token: string, run: () => Promise<T>): (() => Promise<T>) => {
    const renewal = renewing.get(id);
    return renewal?.token === token ? () => renewal.landed.then(run) : run;
  };
  const renewed = (id: string, token: string, sent: Promise<unknown>): void => {
    const before = renewing.get(id);
    const entry = {
      token,
      landed: Promise.all(before?.token === token ? [before.landed, sent] : [sent]).then(
        () => {},
        () => {},
      ),
    };
    renewing.set(id, entry);
    void entry.landed.then(() => {
      if (renewing.get(id) === entry) renewing.delete(id);
    });
  };

  const release = (id: string, token: string): Promise<void> => {
    forgetSlow(token);
    return call(afterRenewal(id, token, () => store.release(id, token))).then(
      () => {},
      (error) => notReleased(error, id),
    );
  };
  // A claim past its deadline may still land when the store wakes up: nobody will use it, so it is given up at
  // once rather than holding the sender's retries off (409) for a whole lease.
  const releaseLate = (id: string, pending: Promise<ClaimResult>): void => {
    void pending.then(
      (late) => {
        if (late.status === 'claimed') release(id, late.token);
      },
      () => {},
    );
  };

  return {
    claim: store.inProcess
      ? (id, orderingKey) => store.claim(id, leaseMs, orderingKey)
      : (id, orderingKey) => {
          inFlight++;
          return withDeadline(
            () => store.claim(id, leaseMs, orderingKey),
            timeoutMs,
            'store_unavailable',
            (pending) => releaseLate(id, pending),
            claimEnded,
          );
        },
    // Asked only on the way to a 503: a delivery the store answered costs nothing of it.
    explain(error) {
      if (store.explain === undefined) return error;
      try {
        return store.explain(error) ?? error;
      } catch {
        return error;
      }
    },
    took(token) {
      if (slowClaims.size === 0) return 0;
      const ms = slowClaims.get(token) ?? 0;
      slowClaims.delete(token);
      return ms;
    },
    // A failure to mark an id done is logged and never changes an answer: the event was accepted or processed.
    complete(id, token) {
      forgetSlow(token);
      return call(afterRenewal(id, token, () => store.complete(id, token, doneTtlMs))).then(
        (held) => expired(held, id),
        (error) => notMarked(error, id),
      );
    },
    release,
    keep(id, token, lost, now = false, since = undefined) {
      let stopped = false;
      // When the lease was last written, at the latest (a call's send time: the store wrote it after that).
      let written = since ?? performance.now();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const stop = (): void => {
        stopped = true;
        clearTimeout(timer);
      };
      const after = (at: number): void => {
        timer = setTimeout(renew, Math.max(0, at - performance.now()));
      };
      const renew = (): void => {
        if (stopped) return;
        const sent = performance.now();
        call(() => {
          const pending = store.renew(id, token, leaseMs);
          renewed(id, token, pending);
          return pending;
        }).then(
          (held) => {
            if (stopped) return;
            if (!held) {
              stop();
              logger.error(
                { eventId: id },
                'workforce-webhooks: the lease was lost to another delivery while handlers ran; their signal is aborted',
              );
              lost(
                new WebhookError(
                  'lease_lost',
                  'the claim on this event was taken by another delivery (its lease lapsed); stop and leave the event to it',
                ),
              );
              return;
            }
            written = Math.max(written, sent);
            after(written + leaseMs / 3);
          },
          // A store that cannot be reached is tried again soon, not a third later: two failures in a row would
          // otherwise leave one try before the lease lapses. The lease may still hold; one that lapsed meanwhile
          // is taken back by the next renewal while nobody took the id, or found taken (above).
          (error) => {
            if (stopped) return;
            logger.warn({ eventId: id, err: error }, 'workforce-webhooks: lease renewal failed');
            after(sent + leaseMs / 6);
          },
        );
      };
      if (now) renew();
      else after(written + leaseMs / 3);
      return stop;
    },
    async settled() {
      // Looked at again a turn after it reached none: what answers a call may start the next one (a release).
      for (;;) {
        if (inFlight > 0)
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
        wake = undefined;
        await new Promise((resolve) => setTimeout(resolve, 0));
        if (inFlight === 0) return;
      }
    },
  };
}
