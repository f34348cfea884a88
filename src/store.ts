// The dedupe store (spec rule 3): an atomic claim per event id, and the in-process store on a packed table.
import { ConfigurationError } from './errors.js';
import { IdTable, MAX_SLOTS } from './id-table.js';
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
  /** Ids remembered: those of the last `max` claims (at most 2^24), about 50 bytes each. Default 100 000. */
  readonly max?: number;
  /** The clock (ms), like `Date.now`; leases and done TTLs follow it. */
  readonly now?: () => number;
}

const DONE_CLAIM: ClaimResult = Object.freeze({ status: 'done' });
const IN_PROGRESS_CLAIM: ClaimResult = Object.freeze({ status: 'in_progress' });
const MAX_TOKEN = 2 ** 31 - 1;

// A token as the store wrote it (`String` of a number from 1 to MAX_TOKEN), or 0 for any other string.
function tokenNumber(token: string): number {
  const { length } = token;
  if (length === 0 || length > 10 || token.charCodeAt(0) === 48) return 0;
  for (let i = 0; i < length; i++) {
    const c = token.charCodeAt(i);
    if (c < 48 || c > 57) return 0;
  }
  const value = Number(token);
  return value <= MAX_TOKEN ? value : 0;
}

/**
 * The in-process dedupe store: at most `max` ids, done ids kept for the TTL given to `complete`.
 * Right for one process; several instances need `createRedisStore`.
 * @example
 * createReceiver({ secret, store: createMemoryStore({ max: 500_000 }) });
 */
export function createMemoryStore({ max = 100_000, now = Date.now }: MemoryStoreOptions = {}): DedupeStore {
  if (!Number.isInteger(max) || max < 1) throw new ConfigurationError('store max must be a positive integer');
  if (max > MAX_SLOTS) throw new ConfigurationError(`store max must be at most ${MAX_SLOTS}`);
  // The last `max` claims in claim order (src/id-table.ts). A slot whose lease or done mark has passed reads as
  // absent; a claim of its id takes a new slot.
  const table = new IdTable(max);
  let counter = 0;

  // The slot of `id` while `token` owns its lease at `at` (inclusive of the last millisecond); else -1.
  const owned = (id: string, token: string, at: number): number => {
    const slot = table.find(id);
    if (slot === -1 || table.expires(slot) < at) return -1;
    const owner = tokenNumber(token);
    return owner !== 0 && table.token(slot) === owner ? slot : -1;
  };

  const sync: SyncStore = {
    claim(id, leaseMs) {
      const at = now();
      const slot = table.find(id);
      if (slot !== -1) {
        if (table.expires(slot) >= at) return table.token(slot) === 0 ? DONE_CLAIM : IN_PROGRESS_CLAIM;
        table.remove(slot);
      }
      counter = counter === MAX_TOKEN ? 1 : counter + 1;
      table.insert(counter, at + leaseMs);
      return { status: 'claimed', token: String(counter) };
    },
    complete(id, token, ttlMs) {
      const at = now();
      const slot = owned(id, token, at);
      if (slot === -1) return false;
      table.set(slot, 0, at + ttlMs);
      return true;
    },
    release(id, token) {
      const slot = owned(id, token, now());
      if (slot === -1) return false;
      table.remove(slot);
      return true;
    },
  };

  return withSyncFace<DedupeStore, SyncStore>(
    {
      claim: async (id, leaseMs) => sync.claim(id, leaseMs),
      async renew(id, token, leaseMs) {
        const at = now();
        const slot = owned(id, token, at);
        if (slot === -1) return false;
        table.set(slot, table.token(slot), at + leaseMs);
        return true;
      },
      complete: async (id, token, ttlMs) => sync.complete(id, token, ttlMs),
      release: async (id, token) => sync.release(id, token),
    },
    sync,
  );
}
