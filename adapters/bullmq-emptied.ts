// The BullMQ queue's watch for a Redis that lost its data: the jobs it held are lost, and that is said loudly.
// Internal: not a subpath of the package.
import type { Redis } from 'ioredis';

/**
 * Calls `emptied` when `client` finds that Redis lost its data: a key set on every connection and every `everyMs`
 * (`SET NX`, one command per connect and per interval, none per job) that a reconnect (Redis restarted without
 * persistence) or a later look (a `FLUSHALL` or `FLUSHDB` while the connection stayed up, jobs running or not)
 * finds gone. Of several instances, the first to set it again reports it. Returns the function that stops it.
 * @example
 * const stop = watchForEmptyRedis(workerClient, queue.toKey('workforce-webhooks:since'), 5000, () => logger.error({}, 'jobs lost'));
 */
export function watchForEmptyRedis(
  client: Redis,
  key: string,
  everyMs: number,
  emptied: () => void,
): () => void {
  // Once a SET NX has answered, the key is known to have been there: a later one that sets it finds it was removed.
  // Not before: a first set refused (Redis full, read-only) must not be taken for an emptied Redis later.
  let held = false;
  // A look Redis has not answered yet: a silent Redis (stopped, the connection still `ready`) would otherwise get one
  // more per interval, all waiting in the connection until it answers. One sent before a reconnect is sent again
  // after it (the worker's connection retries every command), so it is the reconnect's look too.
  let looking = false;
  const look = (): void => {
    if (looking) return;
    looking = true;
    client.set(key, String(Date.now()), 'NX').then(
      (set) => {
        looking = false;
        if (set === 'OK' && held) emptied();
        held = true;
      },
      // A Redis that fails this (gone again, or full) is reported by the worker's own errors.
      () => {
        looking = false;
      },
    );
  };
  client.on('ready', look);
  // While the connection is down the next `ready` looks; no command waits in the offline queue meanwhile.
  const timer = setInterval(() => {
    if (held && client.status === 'ready') look();
  }, everyMs);
  timer.unref?.();
  return () => {
    clearInterval(timer);
    client.off('ready', look);
  };
}
