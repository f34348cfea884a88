// `{ url }` is node-redis's option, not ioredis's: ioredis ignores it and connects to localhost:6379, so a store or
// queue would silently use another Redis (or none). Both refuse it when made, naming the address it would reach.
import { Redis, type RedisOptions } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createRedisStore } from 'workforce-webhooks/redis';

const clients: Redis[] = [];
afterEach(() => {
  for (const client of clients.splice(0)) client.disconnect();
});
// `url` is not an ioredis option: given as users coming from node-redis write it.
const lazy = (options: Record<string, unknown>): Redis => {
  const client = new Redis({ lazyConnect: true, maxRetriesPerRequest: 1, ...options } as RedisOptions);
  client.on('error', () => {});
  clients.push(client);
  return client;
};
const thrownBy = (make: () => unknown): Error => {
  try {
    make();
  } catch (error) {
    return error as Error;
  }
  throw new Error('nothing was thrown');
};

describe('ioredis options with a url', () => {
  it('createRedisStore refuses a client made with { url }, naming where it would connect instead', () => {
    const error = thrownBy(() =>
      createRedisStore({ client: lazy({ url: 'redis://:s3cret@cache.internal:6380' }) }),
    );
    expect(error).toMatchObject({ name: 'ConfigurationError', code: 'invalid_options' });
    expect(error.message).toContain('url: redis://***@cache.internal:6380, which ioredis ignores');
    expect(error.message).toContain('it would connect to localhost:6379 instead');
    expect(error.message).toContain('new Redis(url, options)');
    expect(error.message).not.toContain('s3cret');
  });

  it('createBullmqQueue refuses { url } as its connection before opening any connection', () => {
    const error = thrownBy(() =>
      createBullmqQueue({ connection: { url: 'redis://cache.internal:6380' }, name: 'never-opened' }),
    );
    expect(error).toMatchObject({ name: 'ConfigurationError', code: 'invalid_options' });
    expect(error.message).toContain('url: redis://cache.internal:6380, which ioredis ignores');
  });

  it('leaves a url that names the very host and port the client connects to alone', () => {
    expect(() =>
      createRedisStore({
        client: lazy({ url: 'redis://cache.internal:6380', host: 'cache.internal', port: 6380 }),
      }),
    ).not.toThrow();
  });
});
