// The BullMQ queue's watch for a Redis that comes back empty: the jobs it held are lost, and that is said loudly.
// Internal: not a subpath of the package.
import type { Redis } from 'ioredis';

/**
 * Calls `emptied` when `client` reconnects to a Redis that lost its data (restarted without persistence; a flush is
 * seen at the next reconnect only): a key set on every connection (`SET NX`, one command per connect, none per job)
 * that a reconnect finds gone. Of several instances reconnecting, the first to set it again reports it.
 * @example
 * watchForEmptyRedis(workerClient, queue.toKey('workforce-webhooks:since'), () => logger.error({}, 'jobs lost'));
 */
export function watchForEmptyRedis(client: Redis, key: string, emptied: () => void): void {
  let connectedBefore = false;
  client.on('ready', () => {
    const reconnect = connectedBefore;
    connectedBefore = true;
    client.set(key, String(Date.now()), 'NX').then(
      (set) => {
        if (set === 'OK' && reconnect) emptied();
      },
      // A Redis that fails this (gone again, or full) is reported by the worker's own errors.
      () => {},
    );
  });
}
