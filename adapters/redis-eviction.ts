// An evicting Redis (maxmemory-policy other than noeviction), said once per Redis with what it breaks and the fix.
// Internal: not a subpath of the package.
import type { Cluster, Redis } from 'ioredis';
import type { Logger } from '../src/logger.js';
import { addressOf } from './redis-connection.js';

// The Redis addresses whose eviction policy was already said (by any client of the process): once each.
const evictionSaidOf = new Set<string>();
const evictionSaidOfCluster = new WeakSet<object>();
const evictionWatched = new WeakSet<object>();
const POLICY = /^maxmemory_policy:(\S+)/m;

/**
 * Reads `client`'s Redis eviction policy once, when it is first ready, and warns once per Redis address when it is
 * not `noeviction`, saying what it breaks and the fix. Read through `INFO memory` (a managed Redis may refuse
 * `CONFIG GET`); a refused or failed read says nothing, and nothing waits on it.
 * @example
 * watchEviction(client, logger);
 */
export const watchEviction = (client: Redis | Cluster, logger: Logger): void => {
  if (evictionWatched.has(client) || typeof client.once !== 'function' || typeof client.call !== 'function')
    return;
  evictionWatched.add(client);
  const read = (): void => {
    client.call('INFO', 'memory').then(
      (info) => {
        const policy = POLICY.exec(String(info))?.[1];
        if (policy === undefined || policy === 'noeviction') return;
        const address = addressOf(client);
        if (address === undefined ? evictionSaidOfCluster.has(client) : evictionSaidOf.has(address)) return;
        if (address === undefined) evictionSaidOfCluster.add(client);
        else evictionSaidOf.add(address);
        logger.warn(
          { maxmemoryPolicy: policy },
          `workforce-webhooks: Redis runs with maxmemory-policy ${policy}, so once it is full it evicts keys this ` +
            'package needs: done event ids and claims (a redelivered event runs its handlers again) and BullMQ jobs ' +
            '(an accepted event is lost). Set maxmemory-policy noeviction (CONFIG SET maxmemory-policy noeviction ' +
            "and in redis.conf, or a managed Redis's parameter group): a full Redis then refuses writes, and " +
            'deliveries are answered 503 and retried by the service',
        );
      },
      () => {},
    );
  };
  if (client.status === 'ready') read();
  else client.once('ready', read);
};
