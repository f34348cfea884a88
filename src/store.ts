// The dedupe store (spec rule 3): an atomic claim per event id, and the in-process store on lru-cache.
import { LRUCache } from 'lru-cache';
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
  /** Most ids remembered; the least recently used go first past it. Default 100 000. */
  readonly max?: number;
  /** The clock (ms), like `Date.now`; leases and done TTLs follow it. */
  readonly now?: () => number;
}

type Entry = { readonly state: 'done' } | { readonly state: 'claimed'; readonly token: string };

const DONE: Entry = Object.freeze({ state: 'done' });
const DONE_CLAIM: ClaimResult = Object.freeze({ status: 'done' });
const IN_PROGRESS_CLAIM: ClaimResult = Object.freeze({ status: 'in_progress' });

/**
 * The in-process dedupe store: bounded by `max`, done ids kept for the TTL given to `complete`.
 * Right for one process; several instances need `createRedisStore`.
 * @example
 * createReceiver({ secret, store: createMemoryStore({ max: 500_000 }) });
 */
export function createMemoryStore({ max = 100_000, now = Date.now }: MemoryStoreOptions = {}): DedupeStore {
  if (!Number.isInteger(max) || max < 1) throw new ConfigurationError('store max must be a positive integer');
  // Every entry carries its own TTL (a lease, or the done window); expired ones read as absent.
  const entries = new LRUCache<string, Entry>({ max, ttlAutopurge: false, ttlResolution: 0, perf: { now } });
  let counter = 0;

  const owned = (id: string, token: string): boolean => {
    const entry = entries.get(id);
    return entry !== undefined && entry.state === 'claimed' && entry.token === token;
  };

  const sync: SyncStore = {
    claim(id, leaseMs) {
      const entry = entries.get(id);
      if (entry !== undefined) return entry.state === 'done' ? DONE_CLAIM : IN_PROGRESS_CLAIM;
      const token = `${++counter}`;
      entries.set(id, { state: 'claimed', token }, { ttl: leaseMs });
      return { status: 'claimed', token };
    },
    complete(id, token, ttlMs) {
      if (!owned(id, token)) return false;
      entries.set(id, DONE, { ttl: ttlMs });
      return true;
    },
    release(id, token) {
      if (!owned(id, token)) return false;
      entries.delete(id);
      return true;
    },
  };

  return withSyncFace<DedupeStore, SyncStore>(
    {
      claim: async (id, leaseMs) => sync.claim(id, leaseMs),
      async renew(id, token, leaseMs) {
        if (!owned(id, token)) return false;
        entries.set(id, { state: 'claimed', token }, { ttl: leaseMs });
        return true;
      },
      complete: async (id, token, ttlMs) => sync.complete(id, token, ttlMs),
      release: async (id, token) => sync.release(id, token),
    },
    sync,
  );
}
