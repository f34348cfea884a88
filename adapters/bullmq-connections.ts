// Redis connections: the queue's own (opened from the user's, waited for once, closed in time), and why one fails.
// Internal: not a subpath of the package.
import { Redis, type RedisOptions } from 'ioredis';
import { WebhookError } from '../src/errors.js';
import { type ConnectionError, connectionFailure, withoutPassword } from './redis-connection.js';

// ioredis's own reconnect delay (ms) after `times` tries, for when the user's retryStrategy gives none.
const reconnectDelay = (times: number): number => Math.min(times * 50, 2000);

// The user's retryStrategy, kept while it gives a delay, and ioredis's own when it gives none (null, or no function):
// a connection of the queue that gave up would leave every enqueue 503 and the worker idle until a restart, while
// the queue lives for the process. `quit` and `disconnect` still end it: ioredis asks no strategy then.
const alwaysReconnect = (theirs: unknown): ((times: number) => number) => {
  if (typeof theirs !== 'function') return reconnectDelay;
  return (times) => {
    const delay: unknown = theirs(times);
    return typeof delay === 'number' ? delay : reconnectDelay(times);
  };
};

// After a failover behind one address (a managed Redis's endpoint, a proxy), the connections still open to the old
// primary get READONLY for every write, for ever: such a connection is dropped and opened again, to the address's new
// primary (the failed command fails: a 503 the sender retries, a worker call BullMQ tries again). The user's own
// reconnectOnError is asked first.
const READ_ONLY_RECONNECT_MS = 1000;
const reconnectWhenReadOnly = (theirs: unknown): ((error: Error) => boolean | 1 | 2) => {
  // Each connection at most once a second, so that an address that stays on a replica (a misconfiguration) is not
  // reconnected to in a loop. By connection: ioredis calls this on the connection's options, and a duplicate (BullMQ's
  // blocking connection) has options of its own, so one connection's reconnect never holds back another's.
  const last = new WeakMap<object, number>();
  return function (this: unknown, error: Error) {
    const decided: unknown = typeof theirs === 'function' ? theirs(error) : false;
    if (decided === true || decided === 1 || decided === 2) return decided;
    if (!error.message.startsWith('READONLY')) return false;
    if (typeof this !== 'object' || this === null) return 1;
    const now = performance.now();
    if (now - (last.get(this) ?? Number.NEGATIVE_INFINITY) < READ_ONLY_RECONNECT_MS) return false;
    last.set(this, now);
    return 1;
  };
};

/**
 * A connection of the queue's own, from the user's ioredis client (duplicated, never used itself), its options or a
 * URL, with `overrides`; it reconnects whenever Redis comes back, and when a failover left it on a read-only
 * replica. Its errors are not emitted: BullMQ reports them through the queue's and worker's `error`.
 * @example
 * const producer = openRedis(connection, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
 */
export function openRedis(
  connection: Redis | RedisOptions | string | object,
  overrides: RedisOptions,
): Redis {
  const duplicable = typeof (connection as Redis).duplicate === 'function'; // an ioredis client, of any copy
  const given = (
    typeof connection === 'string' ? {} : duplicable ? (connection as Redis).options : connection
  ) as RedisOptions;
  const own: RedisOptions = {
    ...overrides,
    retryStrategy: alwaysReconnect(given?.retryStrategy),
    reconnectOnError: reconnectWhenReadOnly(given?.reconnectOnError),
  };
  const client =
    typeof connection === 'string'
      ? new Redis(connection, own)
      : duplicable
        ? (connection as Redis).duplicate(own)
        : new Redis({ ...(connection as RedisOptions), ...own });
  client.on('error', () => {});
  return client;
}

/**
 * A wait for `client` to be ready: at once when it is, rejected with `queue_unavailable` when it is closed or its
 * connection fails, saying why with the fix. Every caller that arrives while it connects waits on one shared
 * promise: one set of listeners, however many wait (no MaxListenersExceededWarning under load). Not bounded here: the receiver's `queueTimeoutMs`
 * bounds it for an enqueue, `adminCall`'s deadline for an admin call.
 * @example
 * const usable = readiness(producer); await usable(); await queue.add(name, data);
 */
export function readiness(client: Redis): () => Promise<void> {
  let connecting: Promise<void> | undefined;
  // The client's last connection failure till it is ready again: a refusal says why, with the fix (a wrong password
  // or port), rather than only that the client is reconnecting.
  let failure: ConnectionError | undefined;
  let reached = client.status === 'ready';
  const tls = Boolean(client.options?.tls);
  client.on('error', (error: ConnectionError) => {
    failure = error;
  });
  client.on('ready', () => {
    failure = undefined;
    reached = true;
  });
  const unavailable = (state: string, cause?: Error): WebhookError => {
    const known = cause ?? failure;
    const why = known instanceof Error ? `: ${connectionFailure(known, tls, reached).text}` : '';
    // A refused login's error carries the AUTH command's arguments: the password, never logged.
    return new WebhookError('queue_unavailable', `Redis is ${state}${why}`, {
      cause: withoutPassword(known),
    });
  };
  return () => {
    if (client.status === 'ready') return Promise.resolve();
    if (!['wait', 'connecting', 'connect'].includes(client.status))
      return Promise.reject(unavailable(client.status));
    connecting ??= new Promise<void>((resolve, reject) => {
      const done = (error?: Error): void => {
        client.off('ready', done).off('error', done).off('end', done);
        connecting = undefined;
        if (error === undefined && client.status === 'ready') resolve();
        else reject(unavailable('unreachable', error));
      };
      client.once('ready', done).once('error', done).once('end', done);
      if (client.status === 'wait') client.connect().catch(() => {});
    });
    return connecting;
  };
}

/**
 * True when `ms` pass before `promise` settles; never, with `Infinity` (no timer: one that long would fire at once).
 * @example
 * if (await outlasts(worker.close(), 1000)) void worker.disconnect();
 */
export async function outlasts(promise: Promise<unknown>, ms: number): Promise<boolean> {
  if (ms === Number.POSITIVE_INFINITY) return promise.then(() => false);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = await Promise.race([
    promise.then(() => false),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(resolve, ms, true);
    }),
  ]);
  clearTimeout(timer);
  return late;
}

/**
 * Closes `client` gracefully when it answers within `ms`, else drops its connection (a silent Redis keeps the
 * socket open and the client `ready`, so `quit` alone would wait for it).
 * @example
 * await quitWithin(producer, 1000);
 */
export async function quitWithin(client: Redis, ms: number): Promise<void> {
  if (client.status !== 'ready') return client.disconnect();
  const quit = client.quit().catch(() => {});
  if (await outlasts(quit, ms)) client.disconnect();
}
