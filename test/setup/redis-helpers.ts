// Test-side Redis helpers: the run's server URL (or a loud skip), isolated names, clients closed after each file.
import { Redis, type RedisOptions } from 'ioredis';
import { afterAll, inject } from 'vitest';

/** The run's redis-server (`test/setup/redis.ts`); empty when there is none, and Redis suites skip. */
export const redisUrl: string = inject('redisUrl');

/**
 * A name no other test uses, for key prefixes and BullMQ queue names (tests share one server).
 * @example
 * createRedisStore({ client, prefix: uniqueName('store') + ':' });
 */
export function uniqueName(label: string): string {
  return `wfwh-test-${label}-${crypto.randomUUID().slice(0, 8)}`;
}

const clients = new Set<Redis>();
afterAll(async () => {
  await Promise.all([...clients].map((client) => client.quit().catch(() => client.disconnect())));
  clients.clear();
});

/**
 * An ioredis client set up as the README ("Running several instances") advises for the store (fails fast while Redis is away),
 * closed after the file's tests.
 * @example
 * const client = connectRedis();
 */
export function connectRedis(url: string = redisUrl, options: RedisOptions = {}): Redis {
  const client = new Redis(url, { maxRetriesPerRequest: 1, ...options });
  // Connection errors are expected while a test stops Redis; the commands' rejections carry them.
  client.on('error', () => {});
  clients.add(client);
  return client;
}
