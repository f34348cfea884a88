// The memory store with its ordering writes refused on demand, as Redis out of memory or a store away refuses them:
// `enter` still answers, so a lapsed key can be taken (taking a lapsed key frees its hash first).
import { createMemoryStore, type DedupeStore } from 'workforce-webhooks';

/** The store, what it refused so far, and a record's watermark as the store has it. */
export interface RefusingStore {
  readonly store: DedupeStore;
  readonly state: { refusing: boolean; refused: number };
  watermark(key: string): Promise<string | undefined> | string | undefined;
}

/**
 * A memory store whose watermark writes (a `leave` with a mark) throw while `state.refusing` is set, and, with
 * `renewals`, its lease renewals too; `state.refused` counts the refusals.
 * @example
 * const { store, state, watermark } = refusingOrderingStore(); state.refusing = true;
 */
export function refusingOrderingStore({
  renewals = false,
}: {
  readonly renewals?: boolean;
} = {}): RefusingStore {
  const inner = createMemoryStore();
  const keys = inner.ordering!;
  const state = { refusing: false, refused: 0 };
  const refuse = (): never => {
    state.refused++;
    throw new Error('OOM command not allowed when used memory > maxmemory');
  };
  const store: DedupeStore = {
    ...inner,
    ordering: {
      ...keys,
      renew(key, owner, run, leaseMs) {
        if (renewals && state.refusing) refuse();
        return keys.renew(key, owner, run, leaseMs);
      },
      leave(key, owner, mark, ttlMs, run) {
        if (state.refusing && mark !== undefined) refuse();
        return keys.leave(key, owner, mark, ttlMs, run);
      },
    },
  };
  return { store, state, watermark: (key: string) => keys.watermark(key) };
}
