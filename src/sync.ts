// The synchronous faces of the in-process store and queue. The receiver calls them on its hot path to skip a
// promise and a microtask per call; any other store or queue is used through its public, promise-based methods.
import type { AttemptProcessor } from './attempt.js';
import type { EnqueueResult, QueuedEvent } from './queue.js';
import type { HandleInput, Receiver } from './receiver.js';
import type { WebhookResponse } from './responses.js';
import type { ClaimResult } from './store.js';

const SYNC: unique symbol = Symbol('workforce-webhooks.sync');

/** `DedupeStore` answering at once; failures are thrown. */
export interface SyncStore {
  claim(id: string, leaseMs: number): ClaimResult;
  complete(id: string, token: string, ttlMs: number): boolean;
  release(id: string, token: string): boolean;
}

/** `EventQueue.enqueue` answering at once; failures are thrown. */
export interface SyncQueue {
  enqueue(job: QueuedEvent): EnqueueResult;
}

/** `QueueHooks.process` answering without a promise when the handlers returned none. */
export interface SyncHooks {
  readonly process: AttemptProcessor;
}

/** `Receiver.handle` answering without a promise when every part of the delivery could; never throws. */
export interface SyncReceiver {
  handle(input: HandleInput): WebhookResponse | Promise<WebhookResponse>;
}

/**
 * Attaches `face` to `target`, not enumerable: a wrapper made by spreading the store (`{ ...store, claim }`)
 * does not inherit it, so the wrapper's own methods are the ones called.
 * @example
 * return withSyncFace({ claim: async (id, ms) => sync.claim(id, ms), ... }, sync);
 */
export function withSyncFace<T extends object, F>(target: T, face: F): T {
  Object.defineProperty(target, SYNC, { value: face, enumerable: false });
  return target;
}

/**
 * The synchronous face of a store or queue made by this package, or undefined for any other.
 * @example
 * const sync = syncFace<SyncStore>(store);
 */
export function syncFace<F>(target: object): F | undefined {
  return Object.hasOwn(target, SYNC) ? (target as { [SYNC]: F })[SYNC] : undefined;
}

/**
 * How an adapter calls the receiver: its synchronous face when it is this package's, else `handle`.
 * @example
 * const handle = answerOf(receiver); const answer = handle(input);
 * const response = answer instanceof Promise ? await answer : answer;
 */
export function answerOf(
  receiver: Pick<Receiver<unknown>, 'handle'>,
): (input: HandleInput) => WebhookResponse | Promise<WebhookResponse> {
  const face = syncFace<SyncReceiver>(receiver);
  if (face !== undefined) return face.handle;
  return (input) => Promise.resolve(receiver.handle(input));
}
