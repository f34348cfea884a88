// Telling an answer given at once from one given as a promise (a store's, a secret function's).

/**
 * An answer that may come at once (a store in process, a secret function) or as a promise: true for the promise.
 * @example
 * const entry = store.enter(key, id, leaseMs, run); if (!isPromise(entry)) return run(entry);
 */
export const isPromise = <T>(value: T | Promise<T>): value is Promise<T> =>
  typeof (value as Promise<T> | undefined)?.then === 'function';
