// Transactional handlers: the store opens a database transaction for one attempt and commits the event's done mark in it.

/**
 * What `ctx.transaction()` resolves with: empty here, so the core names no database client;
 * `workforce-webhooks/postgres` makes it a `pg` `PoolClient` by declaration merging.
 * @example
 * const db = await ctx.transaction(); await db.query('INSERT INTO leaves (event_id) VALUES ($1)', [event.id]);
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled in by declaration merging from the store's module.
export interface HandlerTransaction {}

/**
 * One attempt's transaction, as a store opens it (`DedupeStore.begin`).
 * @example
 * const tx = await store.begin(event.id); if (tx !== 'committed') await tx.commit();
 */
export interface EventTransaction {
  /** What handlers get from `ctx.transaction()`: a client inside `BEGIN`. */
  readonly client: HandlerTransaction;
  /** Writes the event's done mark in the transaction and commits; false when another attempt committed first (this one's writes are rolled back). */
  commit(): Promise<boolean>;
  /** Rolls the attempt back; `abandon` when handlers may still be writing (timeout, shutdown): the connection is dropped, never reused. */
  rollback(abandon: boolean): Promise<void>;
}
