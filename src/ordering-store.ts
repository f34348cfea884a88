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
 * string `markOf(event)` builds; marks compare as strings. Implemented by every store of this package. `enter`,
 * `leave` and `renew` may answer at once, without a promise (an in-process store); every other method answers with
 * one.
 *
 * A lease belongs to an owner (the event) and to one `run` of its handlers (an attempt, on some instance): an
 * attempt whose handlers outlive its time limit keeps its run's lease until they settle, and the event's retry (a
 * new run, maybe on another instance) waits for them instead of running beside them. Without `run`, a call acts for
 * the owner whatever its run (a dead letter giving its key up, or a caller that tracks no runs).
 * @example
 * const entry = await store.ordering.enter(key, event.id, 30_000, run);
 */
export interface OrderingStore {
  /**
   * Takes the key for `owner`'s `run` for `leaseMs` (or renews it, when that run already has it), unless another
   * owner's lease or hold is live, or another run of `owner` has a live lease (its handlers still run): then busy.
   * A run of `owner` takes the owner's hold or lapsed lease, keeping its first entry: a failing event's retry keeps
   * the bound of its `hold`. An owner whose lease or hold lapsed keeps its first entry until another owner takes the
   * key (this package's stores keep it a day).
   */
  enter(key: string, owner: string, leaseMs: number, run?: string): KeyEntry | Promise<KeyEntry>;
  /**
   * After a failed attempt: `owner` keeps the key, idle (no run has it), until `maxWaitMs` after it first entered;
   * false when it (with `run`: that run) no longer has it.
   */
  hold(key: string, owner: string, maxWaitMs: number, run?: string): Promise<boolean>;
  /**
   * Moves the watermark to `mark` when it is newer (kept `ttlMs`), then gives the key up if `owner` (with `run`:
   * that run of it) has it; false when it did not have it.
   */
  leave(
    key: string,
    owner: string,
    mark: string | undefined,
    ttlMs: number,
    run?: string,
  ): boolean | Promise<boolean>;
  /** The key's watermark, or undefined. */
  watermark(key: string): Promise<string | undefined>;
  /**
   * Extends the lease of `owner`'s `run` by `leaseMs` only while that run still has it, live or lapsed while nobody
   * took the key; false otherwise. It never takes a free key, a hold or another run's lease, so a renewal that
   * arrives late (after its run left or held the key, or after another event took the lapsed key and gave it up)
   * cannot take the key back. Required: an `enter` in its place could take back a key its run had given up.
   * @example
   * const stillHeld = await store.ordering.renew(key, event.id, run, 30_000); // false: the run lost the key
   */
  renew(key: string, owner: string, run: string, leaseMs: number): boolean | Promise<boolean>;
}

/**
 * How long a key's owner and first-entry time outlive its lease or hold when it never leaves: a failing event's
 * retry that comes back within it keeps the `maxWaitMs` bound of its first run (a queue's backoff is minutes at
 * most by default), and one that never comes back (its process gone) is forgotten after it. One day.
 */
export const LAPSED_KEPT_MS: number = 24 * 60 * 60 * 1000;

// A key's lease or hold: its owner, the run that has it (none: a hold, or entered without one), when it ends, when
// that owner first entered, and when it is forgotten (ms).
interface Lease {
  readonly owner: string;
  run: string | undefined;
  until: number;
  readonly since: number;
  kept: number;
}

// A key's watermark and when it ends (ms, inclusive).
interface Mark {
  mark: string;
  until: number;
}

// The lease is `owner`'s and, when a run is named, that run's.
const isRunOf = (lease: Lease, owner: string, run: string | undefined): boolean =>
  lease.owner === owner && (run === undefined || lease.run === run);

// A run of the lease's owner may take (or renew) it: it is that run's, held (no run has it), lapsed, or no run is
// named. A live lease of another run is busy: its handlers still run.
const mayTake = (lease: Lease, run: string | undefined, at: number): boolean =>
  run === undefined || lease.run === undefined || lease.run === run || lease.until < at;

// The fewest leases the table holds before it looks for forgotten ones (then again at twice what it kept).
const SWEEP_FROM = 1024;

/** The in-process ordering store and the watermark read the memory store's claim makes with it. */
export interface MemoryOrdering {
  readonly ordering: OrderingStore;
  /** The live watermark of `key`, read at once. */
  watermarkNow(key: string): string | undefined;
}

/**
 * The ordering part of `createMemoryStore`, by the injected clock: the watermarks of the last `max` keys left with
 * one, and every live lease and hold, whatever their number (they are the events in flight).
 * @example
 * const { ordering, watermarkNow } = createMemoryOrdering({ max: 100_000, now: Date.now });
 */
export function createMemoryOrdering({ max, now }: { max: number; now: () => number }): MemoryOrdering {
  // Leases and holds are never evicted: one pushed out would let a newer event of its key run beside the running
  // one, or before the failing one's maxWaitMs. An entry goes when its owner leaves, when another owner takes the
  // lapsed key, or once forgotten (`kept`): met so, or swept when the table has doubled.
  const leases = new Map<string, Lease>();
  let sweepAt = SWEEP_FROM;
  const sweep = (at: number): void => {
    for (const [key, lease] of leases) if (lease.kept < at) leases.delete(key);
    sweepAt = Math.max(SWEEP_FROM, leases.size * 2);
  };
  // Watermarks, in the order they were last moved: bounded by `max`, like the dedupe ids. Made at the first mark:
  // lru-cache sets aside all `max` slots up front, and most receivers order nothing.
  let marks: LRUCache<string, Mark> | undefined;
  const markAt = (key: string, at: number): string | undefined => {
    const found = marks?.peek(key);
    return found !== undefined && found.until >= at ? found.mark : undefined;
  };
  // `enter`, `leave` and `renew` answer at once: an ordered event's steps cost no promise of their own.
  const ordering: OrderingStore = {
    enter(key, owner, leaseMs, run) {
      const at = now();
      const lease = leases.get(key);
      if (lease !== undefined && lease.kept >= at && lease.owner === owner && mayTake(lease, run, at)) {
        // A retry of the same event (or its renewal) keeps its first entry, the start of its wait bound.
        lease.until = at + leaseMs;
        lease.kept = lease.until + LAPSED_KEPT_MS;
        if (run !== undefined) lease.run = run;
      } else {
        if (lease !== undefined && lease.until >= at)
          return { status: 'busy', retryInMs: lease.until - at + 1 };
        if (lease === undefined && leases.size >= sweepAt) sweep(at);
        leases.set(key, { owner, run, until: at + leaseMs, since: at, kept: at + leaseMs + LAPSED_KEPT_MS });
      }
      return { status: 'entered', watermark: markAt(key, at) };
    },
    async hold(key, owner, maxWaitMs, run) {
      const lease = leases.get(key);
      if (lease === undefined || !isRunOf(lease, owner, run)) return false;
      if (lease.kept < now()) {
        leases.delete(key);
        return false;
      }
      lease.until = lease.since + maxWaitMs;
      lease.kept = lease.until + LAPSED_KEPT_MS;
      lease.run = undefined; // idle: the event's next run takes it
      return true;
    },
    leave(key, owner, mark, ttlMs, run) {
      const at = now();
      if (mark !== undefined) {
        marks ??= new LRUCache({ max });
        const current = marks.peek(key);
        if (current === undefined) marks.set(key, { mark, until: at + ttlMs });
        else if (current.until < at || mark > current.mark) {
          current.mark = mark;
          current.until = at + ttlMs;
          marks.set(key, current); // the same entry, now the newest
        }
      }
      const lease = leases.get(key);
      if (lease === undefined || !isRunOf(lease, owner, run)) return false;
      leases.delete(key);
      return lease.kept >= at;
    },
    watermark: async (key) => markAt(key, now()),
    renew(key, owner, run, leaseMs) {
      const at = now();
      const lease = leases.get(key);
      // Only the run's own lease, live or lapsed but not taken (nor forgotten): never a hold or a free key.
      if (lease === undefined || lease.kept < at || !isRunOf(lease, owner, run)) return false;
      lease.until = at + leaseMs;
      lease.kept = lease.until + LAPSED_KEPT_MS;
      return true;
    },
  };
  const watermarkNow = (key: string): string | undefined => markAt(key, now());
  return { ordering, watermarkNow };
}
