// Telling a store's answer given at once from one given as a promise.

/**
 * An answer of a store that may answer at once (in process) or with a promise: true for the promise.
 * @example
 * const entry = store.enter(key, id, leaseMs, run); if (!isPromise(entry)) return run(entry);
 */
export const isPromise = <T>(value: T | Promise<T>): value is Promise<T> =>
  typeof (value as Promise<T> | undefined)?.then === 'function';
