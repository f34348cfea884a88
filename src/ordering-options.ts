// The ordering's options (`createReceiver({ ordering })`, and what the receiver adds), and the checks made at start.
import { ConfigurationError } from './errors.js';
import type { Logger } from './logger.js';
import { byDefaultKeys, type OrderingKey } from './ordering-keys.js';
import type { OrderingMark } from './ordering-mark.js';
import type { OrderingStore } from './ordering-store.js';
import type { WorkforceEvent } from './types.js';

/** `createReceiver({ ordering })`: one event per key at a time, and never an older one over a newer one. */
export interface OrderingOptions {
  /** The record key of an event. Default `byDefaultKeys()`: `leave.*` by `data.leaveRequestId`. */
  readonly key?: OrderingKey;
  /** An event older than its key's newest handled one: `skip` it (default) or `run` it with `ctx.stale`. */
  readonly stale?: 'skip' | 'run';
  /** How long a failing event holds newer events of its key before they go ahead. Default 5 minutes. */
  readonly maxWaitMs?: number;
}

/** What `createOrdering` needs beside the user's options. */
export interface OrderingSetup extends OrderingOptions {
  readonly store: OrderingStore | undefined;
  /** The store is shared by other instances (not in-process): a key may be given up where no wake-up reaches. */
  readonly shared: boolean;
  readonly leaseMs: number;
  readonly doneTtlMs: number;
  /** Each call to a shared store is given up after it (the receiver's `storeTimeoutMs`). Default 2000. */
  readonly timeoutMs?: number;
  readonly logger: Logger;
  readonly onStale: ((event: WorkforceEvent, newer: OrderingMark) => unknown) | undefined;
}

/**
 * Refuses, at start, ordering options that cannot work, with what to do; returns the store, known to be there.
 * @example
 * const store = checkOrderingSetup({ key, stale, maxWaitMs, timeoutMs, store: given });
 */
export function checkOrderingSetup({
  key,
  stale,
  maxWaitMs,
  timeoutMs,
  store,
}: {
  readonly key: unknown;
  readonly stale: unknown;
  readonly maxWaitMs: number;
  readonly timeoutMs: number;
  readonly store: OrderingStore | undefined;
}): OrderingStore {
  if (store === undefined)
    throw new ConfigurationError(
      'ordering needs a store that keeps watermarks (every store of this package does)',
    );
  // A store written before `renew` was required: renewing with `enter` could take back a key its run gave up.
  if (typeof store.renew !== 'function')
    throw new ConfigurationError(
      "the store's ordering has no renew(key, owner, run, leaseMs): add it (extend the run's own lease only while that run still has it; see OrderingStore)",
    );
  if (typeof key !== 'function') throw new ConfigurationError('ordering.key must be a function');
  // The factory itself, not its result: called with each event, it would order nothing.
  if (key === byDefaultKeys)
    throw new ConfigurationError(
      'ordering.key is byDefaultKeys itself: call it, ordering: { key: byDefaultKeys() }',
    );
  if (stale !== 'skip' && stale !== 'run')
    throw new ConfigurationError(`ordering.stale must be 'skip' or 'run'`);
  if (!Number.isFinite(maxWaitMs) || maxWaitMs <= 0)
    throw new ConfigurationError('ordering.maxWaitMs must be a positive number');
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0)
    throw new ConfigurationError('the ordering store deadline (storeTimeoutMs) must be a positive number');
  return store;
}
