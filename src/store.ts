// The dedupe store (spec rule 3): an atomic claim per event id, and the in-process store on lru-cache.
import { LRUCache } from 'lru-cache';
import { ConfigurationError } from './errors.js';
import { createMemoryOrdering, type OrderingStore } from './ordering-store.js';
import type { EventTransaction } from './transaction.js';

/** What `claim` found: the caller now owns the id (with a token), someone else is on it, or it is done. */
export type ClaimResult =
  | {
      readonly status: 'claimed';
      readonly token: string;
      /** With an ordering key given to `claim`: the key's watermark, read in the same step. */
      readonly watermark?: string | undefined;
    }
  | { readonly status: 'in_progress' }
  | { readonly status: 'done' };

/**
 * Where event ids are remembered. Every method is atomic; only the holder of a claim's token may renew,
 * complete or release it. Implementations: `createMemoryStore()`, `createRedisStore()` (`workforce-webhooks/redis`).
 * @example
 * const claim = await store.claim(event.id, 30_000);
 * if (claim.status === 'claimed') await store.complete(event.id, claim.token, 72 * 3600_000);
 */
export interface DedupeStore {
  /**
   * Claims `id` for `leaseMs` unless it is done or claimed by a live lease; with `orderingKey`, a claim also
   * reads that key's watermark (ordering on: no extra round trip before the answer).
   */
  claim(id: string, leaseMs: number, orderingKey?: string): Promise<ClaimResult>;
  /**
   * Extends the claim `token` holds, also once its lease has passed if nobody took the id meanwhile; false when
   * another owner holds the id or it is done. Whether an id that another owner took and then released comes back
   * is the store's own: memory and Postgres answer false, Redis (which keeps no trace of a released claim)
   * re-takes it. Either way no live run overlaps the renewed one.
   */
  renew(id: string, token: string, leaseMs: number): Promise<boolean>;
  /**
   * Marks `id` done for `ttlMs`, also once the lease of `token` has passed if nobody took the id meanwhile (Redis,
   * which keeps no trace of a lapsed lease, marks an id it no longer holds); false when another owner holds the id
   * or it is done.
   */
  complete(id: string, token: string, ttlMs: number): Promise<boolean>;
  /** Gives the claim up so a later delivery can take it; false when `token` no longer owns it. */
  release(id: string, token: string): Promise<boolean>;
  /**
   * Optional: opens an attempt's database transaction for `ctx.transaction()`, whose commit carries the event's
   * done mark; `'committed'` when an earlier attempt's transaction already committed it. `signal` is the attempt's:
   * once it aborts (a time limit, a shutdown), `begin` stops waiting for the event, gives its connection back and
   * rejects, within the store's own deadline.
   */
  begin?(eventId: string, signal?: AbortSignal): Promise<EventTransaction | 'committed'>;
  /** The per-key lease and watermark of `createReceiver({ ordering })` (spec rule 4). */
  readonly ordering?: OrderingStore;
  /**
   * True when every call answers from this process's memory and cannot stall (the memory store): the receiver then
   * puts no deadline (`storeTimeoutMs`) on it. A store that waits on a server must leave it unset.
   */
  readonly inProcess?: boolean;
}

/** Three days: longer than the sender's two days of retries (spec "Limits"). */
export const DEFAULT_DONE_TTL_MS: number = 72 * 60 * 60 * 1000;

/** Options of `createMemoryStore`. */
export interface MemoryStoreOptions {
  /**
   * Ids remembered: those of the last `max` claims (at most 2^24). Default 100 000. With `ordering`, also the
   * watermarks remembered: those of the `max` records whose watermark moved last (an older event of a record whose
   * watermark was forgotten runs, as a redelivery of a forgotten id does). Leases and holds of events in flight are
   * never forgotten, whatever `max`.
   */
  readonly max?: number;
  /** The clock (ms), like `Date.now`; leases and done TTLs follow it. */
  readonly now?: () => number;
}

// The most ids one Map holds (V8's limit, where lru-cache keeps its index).
const MAX_IDS = 2 ** 24;
const DONE_CLAIM: ClaimResult = Object.freeze({ status: 'done' });
const IN_PROGRESS_CLAIM: ClaimResult = Object.freeze({ status: 'in_progress' });

// What the store keeps per id: the token that owns the claim (undefined once done) and when the lease or done
// mark ends (ms, inclusive). Changed in place, so that completing or renewing never moves the id in the order.
interface Entry {
  token: string | undefined;
  expires: number;
}

/**
 * The in-process dedupe store: at most `max` ids, done ids kept for the TTL given to `complete`.
 * Right for one process; several instances need `createRedisStore`.
 * @example
 * createReceiver({ secret, store: createMemoryStore({ max: 500_000 }) });
 */
export function createMemoryStore({ max = 100_000, now = Date.now }: MemoryStoreOptions = {}): DedupeStore {
  if (!Number.isInteger(max) || max < 1) throw new ConfigurationError('store max must be a positive integer');
  if (max > MAX_IDS) throw new ConfigurationError(`store max must be at most ${MAX_IDS}`);
  // The ids of the last `max` claims, in claim order: entries are read with `peek`, which leaves the order alone,
  // and only a claim `set`s. Leases and done marks expire by the injected clock, checked on read; an expired entry
  // stays until a claim of its id replaces it or it is the oldest.
  const entries = new LRUCache<string, Entry>({ max });
  const { ordering, watermarkNow } = createMemoryOrdering({ max, now });
  let counter = 0;

  // The entry of `id` while `token` owns its live lease at `at`; else undefined.
  const owned = (id: string, token: string, at: number): Entry | undefined => {
    const entry = entries.peek(id);
    return entry !== undefined && entry.token === token && entry.expires >= at ? entry : undefined;
  };

  return {
    inProcess: true,
    async claim(id, leaseMs, orderingKey) {
      const at = now();
      const entry = entries.peek(id);
      if (entry !== undefined && entry.expires >= at)
        return entry.token === undefined ? DONE_CLAIM : IN_PROGRESS_CLAIM;
      counter += 1;
      const token = String(counter);
      entries.set(id, { token, expires: at + leaseMs });
      if (orderingKey !== undefined)
        return { status: 'claimed', token, watermark: watermarkNow(orderingKey) };
      return { status: 'claimed', token };
    },
    async renew(id, token, leaseMs) {
      // A lease that passed is still the owner's while its entry holds the owner's token: a claim of the id
      // would have replaced the entry, a release removed it, and a done mark cleared the token.
      const entry = entries.peek(id);
      if (entry === undefined || entry.token !== token) return false;
      entry.expires = now() + leaseMs;
      return true;
    },
    async complete(id, token, ttlMs) {
      // As renew: the entry still holds the owner's token while nobody took the id, even past its lease.
      const entry = entries.peek(id);
      if (entry === undefined || entry.token !== token) return false;
      entry.token = undefined;
      entry.expires = now() + ttlMs;
      return true;
    },
    async release(id, token) {
      if (owned(id, token, now()) === undefined) return false;
      entries.delete(id);
      return true;
    },
    ordering,
  };
}
