// The store's side of ordering (spec rule 4): a per-key lease and a per-key watermark, and their in-process form.
import { LRUCache } from 'lru-cache';

/**
 * What `enter` found: the key is now the caller's, with the key's watermark (the mark of the newest event whose
 * handlers all succeeded, if any), or another event holds it; look again in `retryInMs`.
 */
export type KeyEntry =
  | { readonly status: 'entered'; readonly watermark: string | undefined }
  | { readonly status: 'busy'; readonly retryInMs: number };

/**
 * The ordering half of a store: every method is atomic, and the watermark only ever moves forward. A mark is the
 * string `markOf(event)` builds; marks compare as strings. Implemented by every store of this package. `enter` and
 * `leave` may answer at once, without a promise (an in-process store); every other store answers with one.
 * @example
 * const entry = await store.ordering.enter(key, event.id, 30_000);
 */
export interface OrderingStore {
  /**
   * Takes the key for `owner` for `leaseMs` (or renews it, when `owner` already has it), unless another owner's
   * lease or hold is live.
   */
  enter(key: string, owner: string, leaseMs: number): KeyEntry | Promise<KeyEntry>;
  /**
   * After a failed attempt: `owner` keeps the key, idle, until `maxWaitMs` after it first entered; false when it
   * no longer has it.
   */
  hold(key: string, owner: string, maxWaitMs: number): Promise<boolean>;
  /**
   * Moves the watermark to `mark` when it is newer (kept `ttlMs`), then gives the key up if `owner` has it; false
   * when `owner` did not have it.
   */
  leave(key: string, owner: string, mark: string | undefined, ttlMs: number): boolean | Promise<boolean>;
  /** The key's watermark, or undefined. */
  watermark(key: string): Promise<string | undefined>;
}

// Per key: the lease (owner, when it ends, when that owner first entered) and the watermark with its end (ms).
interface KeyState {
  owner: string | undefined;
  until: number;
  since: number;
  mark: string | undefined;
  markUntil: number;
}

/** The in-process ordering store and the watermark read the memory store's claim makes with it. */
export interface MemoryOrdering {
  readonly ordering: OrderingStore;
  /** The live watermark of `key`, read at once. */
  watermarkNow(key: string): string | undefined;
}

/**
 * The ordering part of `createMemoryStore`: at most `max` keys, by the injected clock.
 * @example
 * const { ordering, watermarkNow } = createMemoryOrdering({ max: 100_000, now: Date.now });
 */
export function createMemoryOrdering({ max, now }: { max: number; now: () => number }): MemoryOrdering {
  // Made at the first ordered event: lru-cache sets aside all `max` slots up front, and most receivers order nothing.
  let table: LRUCache<string, KeyState> | undefined;
  const keys = (): LRUCache<string, KeyState> => {
    table ??= new LRUCache({ max });
    return table;
  };
  const watermarkNow = (key: string): string | undefined => {
    const state = table?.peek(key);
    return state !== undefined && state.markUntil >= now() ? state.mark : undefined;
  };
  // `enter` and `leave` answer at once: an ordered event's two steps cost no promise of their own.
  const ordering: OrderingStore = {
    enter(key, owner, leaseMs) {
      const at = now();
      let state = keys().get(key);
      if (state === undefined) {
        state = { owner: undefined, until: 0, since: at, mark: undefined, markUntil: 0 };
        keys().set(key, state);
      }
      if (state.owner !== undefined && state.owner !== owner && state.until >= at)
        return { status: 'busy', retryInMs: state.until - at + 1 };
      // The first entry starts the owner's wait bound; a retry of the same event keeps it.
      if (state.owner !== owner) state.since = at;
      state.owner = owner;
      state.until = at + leaseMs;
      return { status: 'entered', watermark: state.markUntil >= at ? state.mark : undefined };
    },
    async hold(key, owner, maxWaitMs) {
      const state = keys().peek(key);
      if (state === undefined || state.owner !== owner) return false;
      state.until = state.since + maxWaitMs;
      return true;
    },
    leave(key, owner, mark, ttlMs) {
      const at = now();
      const state = keys().peek(key);
      if (state === undefined) {
        if (mark !== undefined)
          keys().set(key, { owner: undefined, until: 0, since: at, mark, markUntil: at + ttlMs });
        return false;
      }
      if (mark !== undefined && (state.markUntil < at || state.mark === undefined || mark > state.mark)) {
        state.mark = mark;
        state.markUntil = at + ttlMs;
      }
      if (state.owner !== owner) return false;
      state.owner = undefined;
      return true;
    },
    watermark: async (key) => watermarkNow(key),
  };
  return { ordering, watermarkNow };
}
