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
   * is the store's own: Postgres answers false, memory and Redis (which keep no trace of a released claim) re-take
   * it. Either way no live run overlaps the renewed one.
   */
  renew(id: string, token: string, leaseMs: number): Promise<boolean>;
  /**
   * Marks `id` done for `ttlMs`, also once the lease of `token` has passed if nobody took the id meanwhile (Redis
   * and memory, which keep no trace of a lapsed lease once it expired or was swept, mark an id they no longer hold);
   * false when another owner holds the id or it is done.
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
  /**
   * Optional: what a call's failure means, asked for each delivery the receiver answers 503 `store_unavailable`
   * (its own `storeTimeoutMs` passed included): a `ConfigurationError` with the fix when the store is set up wrong
   * (an address where its server never answered), else `error` as it is, so the delivery's log line says why.
   */
  explain?(error: unknown): unknown;
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
   * Done ids remembered: those of the last `max` events marked done (at most 2^24). Default 100 000. With
   * `ordering`, also the watermarks remembered: those of the `max` records whose watermark moved last (an older event
   * of a record whose watermark was forgotten runs, as a redelivery of a forgotten id does). Claims, leases and holds
   * of events in flight are never forgotten, whatever `max`.
   */
  readonly max?: number;
  /** The clock (ms), like `Date.now`; leases and done TTLs follow it. */
  readonly now?: () => number;
}

// The most ids one Map holds (V8's limit, where lru-cache keeps its index).
const MAX_IDS = 2 ** 24;
const DONE_CLAIM: ClaimResult = Object.freeze({ status: 'done' });
const IN_PROGRESS_CLAIM: ClaimResult = Object.freeze({ status: 'in_progress' });
// The fewest claims the table holds before it looks for lapsed ones (then again at twice what it kept).
const SWEEP_FROM = 1024;

// What the store keeps per id: the token that owns the claim (undefined once done) and when the lease or done
// mark ends (ms, inclusive). One object from claim to done mark: marking done changes it in place and moves it.
interface Entry {
  token: string | undefined;
  expires: number;
}

/**
 * The in-process dedupe store: every claim in flight, and the last `max` done ids for the TTL given to `complete`.
 * Right for one process; several instances need `createRedisStore`.
 * @example
 * createReceiver({ secret, store: createMemoryStore({ max: 500_000 }) });
 */
export function createMemoryStore(options: MemoryStoreOptions = {}): DedupeStore {
  if (typeof options !== 'object' || options === null)
    throw new ConfigurationError('createMemoryStore options must be an object, e.g. { max: 100_000 }');
  const { max = 100_000, now = Date.now } = options;
  if (!Number.isInteger(max) || max < 1) throw new ConfigurationError('store max must be a positive integer');
  if (max > MAX_IDS) throw new ConfigurationError(`store max must be at most ${MAX_IDS}`);
  if (typeof now !== 'function')
    throw new ConfigurationError('store now must be a function answering milliseconds, like Date.now');
  // Claims in flight live apart from the done ids and are never evicted: one pushed out would be given to the next
  // copy of its event, and its owner's renewal would find it gone and abort a run the sender will not send again.
  // A claim leaves when it is marked done (into `done`), released, or taken over once lapsed; a lapsed one nobody
  // ends (its owner stalled or gone) is swept when the table has doubled, and its owner's late renewal or done
  // mark takes it back, as the Redis store's does once the key expired. Per delivery this costs a second lookup at
  // the claim and one Map insert and delete beside the LRU's one `set` (which the claim made before), and no new
  // object: the entry the claim makes is the one the done mark moves into `done`.
  const claims = new Map<string, Entry>();
  let sweepAt = SWEEP_FROM;
  const sweep = (at: number): void => {
    for (const [id, entry] of claims) if (entry.expires < at) claims.delete(id);
    sweepAt = Math.max(SWEEP_FROM, claims.size * 2);
  };
  // The ids of the last `max` done marks, in the order they were made: read with `peek`, which leaves the order
  // alone. A done mark expires by the injected clock, checked on read, and stays until it is the oldest.
  const done = new LRUCache<string, Entry>({ max });
  const { ordering, watermarkNow } = createMemoryOrdering({ max, now });
  let counter = 0;

  const doneAt = (id: string, at: number): boolean => {
    const entry = done.peek(id);
    return entry !== undefined && entry.expires >= at;
  };

  return {
    inProcess: true,
    async claim(id, leaseMs, orderingKey) {
      const at = now();
      let entry = claims.get(id);
      if (entry !== undefined) {
        if (entry.expires >= at) return IN_PROGRESS_CLAIM;
      } else if (doneAt(id, at)) return DONE_CLAIM;
      counter += 1;
      const token = String(counter);
      if (entry !== undefined) {
        // A lapsed lease taken over: the old owner's token no longer acts on it.
        entry.token = token;
        entry.expires = at + leaseMs;
      } else {
        if (claims.size >= sweepAt) sweep(at);
        entry = { token, expires: at + leaseMs };
        claims.set(id, entry);
      }
      if (orderingKey !== undefined)
        return { status: 'claimed', token, watermark: watermarkNow(orderingKey) };
      return { status: 'claimed', token };
    },
    async renew(id, token, leaseMs) {
      const at = now();
      // A lease that passed is still the owner's while its entry holds the owner's token: a claim of the id would
      // have changed the token, a release or a done mark taken the entry out.
      const entry = claims.get(id);
      if (entry !== undefined) {
        if (entry.token !== token) return false;
        entry.expires = at + leaseMs;
        return true;
      }
      // Nobody holds the id (released, or a lapsed lease swept): the renewal takes it back unless it is done.
      if (doneAt(id, at)) return false;
      claims.set(id, { token, expires: at + leaseMs });
      return true;
    },
    async complete(id, token, ttlMs) {
      const at = now();
      // As renew: the entry still holds the owner's token while nobody took the id, even past its lease.
      let entry = claims.get(id);
      if (entry !== undefined) {
        if (entry.token !== token) return false;
        claims.delete(id);
      } else if (doneAt(id, at)) return false;
      else entry = { token: undefined, expires: 0 }; // a lapsed lease swept: marked done while nobody took the id
      entry.token = undefined;
      entry.expires = at + ttlMs;
      done.set(id, entry);
      return true;
    },
    async release(id, token) {
      const entry = claims.get(id);
      if (entry === undefined || entry.token !== token || entry.expires < now()) return false;
      claims.delete(id);
      return true;
    },
    ordering,
  };
}
