// The dedupe store (spec rule 3): an atomic claim per event id, and the in-process store on a Map.
import { ConfigurationError } from './errors.js';
import { type SyncStore, withSyncFace } from './sync.js';

/** What `claim` found: the caller now owns the id (with a token), someone else is on it, or it is done. */
export type ClaimResult =
  | { readonly status: 'claimed'; readonly token: string }
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
  /** Claims `id` for `leaseMs` unless it is done or claimed by a live lease. */
  claim(id: string, leaseMs: number): Promise<ClaimResult>;
  /** Extends a live claim; false when the claim was lost (expired and taken, or released). */
  renew(id: string, token: string, leaseMs: number): Promise<boolean>;
  /** Marks `id` done for `ttlMs`; false when `token` no longer owns the claim. */
  complete(id: string, token: string, ttlMs: number): Promise<boolean>;
  /** Gives the claim up so a later delivery can take it; false when `token` no longer owns it. */
  release(id: string, token: string): Promise<boolean>;
}

/** Three days: longer than the sender's two days of retries (spec "Limits"). */
export const DEFAULT_DONE_TTL_MS: number = 72 * 60 * 60 * 1000;

/** Options of `createMemoryStore`. */
export interface MemoryStoreOptions {
  /** Most ids remembered (at most 2^24); past it, the id claimed longest ago is forgotten first. Default 100 000. */
  readonly max?: number;
  /** The clock (ms), like `Date.now`; leases and done TTLs follow it. */
  readonly now?: () => number;
}

// One remembered id: claimed by `token` until `expires`, or done (no token) until `expires`. Mutated in place,
// so a done mark or a renewal allocates nothing.
interface Entry {
  token: string | undefined;
  expires: number;
}

// The most entries a V8 Map holds (2^24); one more throws a RangeError.
const MAX_IDS = 2 ** 24;

const DONE_CLAIM: ClaimResult = Object.freeze({ status: 'done' });
const IN_PROGRESS_CLAIM: ClaimResult = Object.freeze({ status: 'in_progress' });

/**
 * The in-process dedupe store: at most `max` ids, done ids kept for the TTL given to `complete`.
 * Right for one process; several instances need `createRedisStore`.
 * @example
 * createReceiver({ secret, store: createMemoryStore({ max: 500_000 }) });
 */
export function createMemoryStore({ max = 100_000, now = Date.now }: MemoryStoreOptions = {}): DedupeStore {
  if (!Number.isInteger(max) || max < 1) throw new ConfigurationError('store max must be a positive integer');
  if (max > MAX_IDS)
    throw new ConfigurationError(`store max must be at most ${MAX_IDS} (a JavaScript Map's limit)`);
  // A Map keeps insertion order, and an id is inserted when it is claimed: past `max`, the first key is the id
  // claimed longest ago. Expired entries read as absent and are dropped when met or when they reach the front.
  const entries = new Map<string, Entry>();
  let counter = 0;
  // One iterator for the store's life: it stands on the oldest entry, so evicting is O(1). A fresh `keys()` per
  // eviction would walk every slot deleted since the Map last compacted, which is most of them once full.
  let order = entries.keys();
  const forgetOldest = (): void => {
    let oldest = order.next();
    if (oldest.done === true) {
      order = entries.keys();
      oldest = order.next();
    }
    if (oldest.done !== true) entries.delete(oldest.value);
  };

  // The entry of `id` while it lives at `at` (a lease or done window that ends at `expires` holds at `expires`).
  const live = (id: string, at: number): Entry | undefined => {
    const entry = entries.get(id);
    if (entry === undefined || entry.expires >= at) return entry;
    entries.delete(id);
    return undefined;
  };
  const owned = (id: string, token: string, at: number): Entry | undefined => {
    const entry = live(id, at);
    return entry !== undefined && entry.token === token ? entry : undefined;
  };

  const sync: SyncStore = {
    claim(id, leaseMs) {
      const at = now();
      const entry = live(id, at);
      if (entry !== undefined) return entry.token === undefined ? DONE_CLAIM : IN_PROGRESS_CLAIM;
      const token = `${++counter}`;
      entries.set(id, { token, expires: at + leaseMs });
      if (entries.size > max) forgetOldest();
      return { status: 'claimed', token };
    },
    complete(id, token, ttlMs) {
      const at = now();
      const entry = owned(id, token, at);
      if (entry === undefined) return false;
      entry.token = undefined;
      entry.expires = at + ttlMs;
      return true;
    },
    release(id, token) {
      if (owned(id, token, now()) === undefined) return false;
      entries.delete(id);
      return true;
    },
  };

  return withSyncFace<DedupeStore, SyncStore>(
    {
      claim: async (id, leaseMs) => sync.claim(id, leaseMs),
      async renew(id, token, leaseMs) {
        const at = now();
        const entry = owned(id, token, at);
        if (entry === undefined) return false;
        entry.expires = at + leaseMs;
        return true;
      },
      complete: async (id, token, ttlMs) => sync.complete(id, token, ttlMs),
      release: async (id, token) => sync.release(id, token),
    },
    sync,
  );
}
