// The BullMQ queue's admin calls (dead letters, replays, discards, counts): refused once it is closed, bounded while
// it is open.
// Internal: not a subpath of the package.
import { withDeadline } from '../src/deadline.js';
import { WebhookError } from '../src/errors.js';
import { openRedis, quitWithin } from './bullmq-connections.js';

/**
 * How long one admin call may take, its wait for the connection included. Not the receiver's `queueTimeoutMs`
 * (2 s, sized for a delivery's answer, and unknown to the queue), nor `handlerTimeoutMs` (the user's handlers):
 * an operator's call reads a page (one script and up to 1 000 hashes, pipelined) or moves one letter, a few
 * milliseconds on a live Redis, so 10 s refuses only a Redis or Postgres that has stopped answering, never a slow
 * one, and still ends a command line's wait well before anyone gives up on it.
 */
export const ADMIN_TIMEOUT_MS = 10_000;

/**
 * Runs `call` unless the queue is `closed` (its connections are gone: BullMQ's closed Postgres backend would never
 * answer), rejecting with `queue_unavailable` once `ADMIN_TIMEOUT_MS` pass first: a silent Redis keeps a command,
 * or the wait for its connection, pending for ever. The call is not cancelled: a discard or a replay that lands
 * later does what was asked, once (the letter is no longer there for anyone who asks again, who gets false);
 * `expired` is given the call's still pending promise when the deadline passes, to report what it does if it lands.
 * @example
 * deadLetters: (query) => adminCall(closed, () => readDeadLetters(queue, connect, query)),
 */
export function adminCall<T>(
  closed: boolean,
  call: () => Promise<T>,
  expired?: (pending: Promise<T>) => void,
): Promise<T> {
  if (closed) return Promise.reject(new WebhookError('shutting_down', 'the queue is closed'));
  return withDeadline(() => call().catch(outOfMemory), ADMIN_TIMEOUT_MS, 'queue_unavailable', expired);
}

/** The admin calls of one queue under way: `track` adds one, `settled` resolves once those under way have ended. */
export interface AdminCalls {
  track<T>(call: Promise<T>): Promise<T>;
  settled(): Promise<unknown>;
}

/**
 * The admin calls of one queue, tracked so that its close lets those under way end (a replay between its two round
 * trips, a page half read) before it closes the connections they use: cut there, a replay would reject with the
 * client's bare "Connection is closed" and, its letter reset and claimed but never retried, hold it for a minute.
 * @example
 * const admin = adminCalls(); replay: (id) => admin.track(adminCall(closed, () => replayLetter(...)));
 */
export function adminCalls(): AdminCalls {
  const pending = new Set<Promise<unknown>>();
  return {
    track(call) {
      pending.add(call);
      const untrack = (): void => void pending.delete(call);
      call.then(untrack, untrack);
      return call;
    },
    settled: () => Promise.allSettled(pending),
  };
}

// A Redis at its `maxmemory` under `noeviction` refuses every write with an `OOM` reply until there is room: the
// queue cannot act on any letter then, so the call is `queue_unavailable` (a bulk replay or discard stops at the
// first, instead of failing every letter left one by one), with the reason in its message.
function outOfMemory(error: unknown): never {
  if (error instanceof Error && error.message.startsWith('OOM '))
    throw new WebhookError(
      'queue_unavailable',
      'Redis is out of memory (maxmemory reached): it refuses writes until there is room',
      { cause: error },
    );
  throw error;
}

// The keys a BullMQ queue that was ever used leaves under its prefix and name: a job added leaves its events stream
// (kept however far it is trimmed), a started receiver its watch for an emptied Redis. Not `meta`: merely opening a
// Queue on a name (as a command reading it does) writes that one.
const USED_QUEUE_KEYS = [
  'events',
  'workforce-webhooks:since',
  'failed',
  'completed',
  'wait',
  'paused',
  'active',
  'delayed',
  'prioritized',
  'id',
  'stalled-check',
] as const;

/**
 * True when Redis at `connection` holds a key that only the use of the BullMQ queue `name` under `prefix` leaves
 * (false for a mistyped name or prefix, which a read takes for an empty queue), asked in one `EXISTS` within
 * `ADMIN_TIMEOUT_MS` on a connection of its own.
 * @example
 * if (!(await queueUsed('redis://localhost:6379', 'webhooks'))) console.error('no queue webhooks in this Redis');
 */
export async function queueUsed(connection: string, name: string, prefix = 'bull'): Promise<boolean> {
  const client = openRedis(connection, {
    enableOfflineQueue: true,
    maxRetriesPerRequest: 1,
    lazyConnect: true,
  });
  try {
    const keys = USED_QUEUE_KEYS.map((key) => `${prefix}:${name}:${key}`);
    return (await withDeadline(() => client.exists(...keys), ADMIN_TIMEOUT_MS, 'queue_unavailable')) > 0;
  } finally {
    await quitWithin(client, 1000);
  }
}
