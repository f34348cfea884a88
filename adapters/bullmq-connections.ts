// The BullMQ queue's own Redis connections: opened from the user's, waited for once, closed within a deadline.
// Internal: not a subpath of the package.
import { Redis, type RedisOptions } from 'ioredis';
import { WebhookError } from '../src/errors.js';

/**
 * A connection of the queue's own, from the user's ioredis client (duplicated, never used itself), its options or a
 * URL, with `overrides`. Its errors are not emitted: BullMQ reports them through the queue's and worker's `error`.
 * @example
 * const producer = openRedis(connection, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
 */
export function openRedis(
  connection: Redis | RedisOptions | string | object,
  overrides: RedisOptions,
): Redis {
  const client =
    typeof connection === 'string'
      ? new Redis(connection, overrides)
      : typeof (connection as Redis).duplicate === 'function' // an ioredis client, of any copy of ioredis
        ? (connection as Redis).duplicate(overrides)
        : new Redis({ ...(connection as RedisOptions), ...overrides });
  client.on('error', () => {});
  return client;
}

/**
 * A wait for `client` to be ready: at once when it is, rejected with `queue_unavailable` when it is closed or its
 * connection fails. Every caller that arrives while it connects waits on one shared promise: one set of listeners,
 * however many wait (no MaxListenersExceededWarning under load). Not bounded here: the receiver's `queueTimeoutMs`
 * bounds it for an enqueue, `adminCall`'s deadline for an admin call.
 * @example
 * const usable = readiness(producer); await usable(); await queue.add(name, data);
 */
export function readiness(client: Redis): () => Promise<void> {
  let connecting: Promise<void> | undefined;
  return () => {
    if (client.status === 'ready') return Promise.resolve();
    if (!['wait', 'connecting', 'connect'].includes(client.status))
      return Promise.reject(new WebhookError('queue_unavailable', `Redis is ${client.status}`));
    connecting ??= new Promise<void>((resolve, reject) => {
      const done = (error?: Error): void => {
        client.off('ready', done).off('error', done).off('end', done);
        connecting = undefined;
        if (error === undefined && client.status === 'ready') resolve();
        else reject(new WebhookError('queue_unavailable', 'Redis is unreachable', { cause: error }));
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
