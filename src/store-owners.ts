// One store per open receiver: two on one store share its done ids, and an event one took is `duplicate` to the other.
import { ConfigurationError } from './errors.js';
import type { DedupeStore } from './store.js';

// The stores an open receiver holds, by identity (held weakly: a store dropped with its receiver is forgotten).
const held = new WeakSet<DedupeStore>();

const SHARED =
  'a store serves one receiver: this one already serves another open receiver, and the two would share its done ids (an event one of them took would be answered 200 duplicate by the other and never run there). Create one store per receiver: createMemoryStore(), createRedisStore({ client, prefix }) with a prefix of its own, createPostgresStore({ pool, table }) with a table of its own; or close() the first receiver before giving its store to the next';

/**
 * Throws a `ConfigurationError` with the fix when an open receiver already holds `store`.
 * @example
 * refuseHeldStore(store); // before anything is started for the new receiver
 */
export function refuseHeldStore(store: DedupeStore): void {
  if (held.has(store)) throw new ConfigurationError(SHARED);
}

/**
 * Marks `store` held by a receiver now made, and returns what gives it back once that receiver is closed.
 * @example
 * const giveBack = holdStore(store); await drain(); giveBack();
 */
export function holdStore(store: DedupeStore): () => void {
  held.add(store);
  return () => {
    held.delete(store);
  };
}
