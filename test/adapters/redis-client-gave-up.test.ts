// The Redis store on a client that can never reconnect: refused when made so, and named with the fix when its
// retryStrategy gives up at run time (Redis back, every delivery still 503).
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigurationError, createReceiver, type Logger } from 'workforce-webhooks';
import { createRedisStore } from 'workforce-webhooks/redis';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { hasRedisServer, startRedisServer } from '../setup/redis-server.js';

const secret = 'whsec_redis_gave_up';
const encoder = new TextEncoder();
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('Redis store: a client that never reconnects', () => {
  it('refuses a client with retryStrategy null, naming the fix', () => {
    const client = new Redis({ lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: null });
    expect(() => createRedisStore({ client })).toThrow(ConfigurationError);
    expect(() => createRedisStore({ client })).toThrow(/retryStrategy/);
    client.disconnect();
  });

  it('accepts the clients the README advises', () => {
    const advised = new Redis({ lazyConnect: true, maxRetriesPerRequest: 1 });
    const offline = new Redis({
      lazyConnect: true,
      enableOfflineQueue: false,
      retryStrategy: (t) => t * 100,
    });
    expect(() => createRedisStore({ client: advised })).not.toThrow();
    expect(() => createRedisStore({ client: offline })).not.toThrow();
    advised.disconnect();
    offline.disconnect();
  });

  it.skipIf(!hasRedisServer())(
    'answers 503 and names the client that gave up reconnecting, with the fix, once Redis is back',
    { timeout: 30_000 },
    async () => {
      const server = await startRedisServer();
      cleanups.push(() => server.dispose());
      // A common paste: stop reconnecting after a few tries.
      const client = new Redis(server.url, {
        maxRetriesPerRequest: 1,
        retryStrategy: (times) => (times > 2 ? null : 50),
      });
      client.on('error', () => {});
      cleanups.push(async () => client.disconnect());
      const errors: { err?: unknown }[] = [];
      const logger: Logger = {
        debug() {},
        info() {},
        warn() {},
        error: (fields: object) => void errors.push(fields as { err?: unknown }),
      };
      const receiver = createReceiver({
        secret,
        store: createRedisStore({ client }),
        logger,
        mode: 'inline',
      });
      receiver.on('leave.approved', () => {});
      cleanups.push(() => receiver.close({ timeoutMs: 2000 }));
      const deliver = async () => {
        const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
        return receiver.handle({
          method: 'POST',
          headers: delivery.headers,
          body: encoder.encode(delivery.body),
        });
      };
      expect((await deliver()).status).toBe(200);

      await server.stop();
      await expect.poll(() => client.status, { timeout: 10_000 }).toBe('end');
      await server.start();
      await sleep(200);

      const answer = await deliver();
      expect(answer.status).toBe(503);
      expect(JSON.parse(answer.body)).toEqual({ error: 'store_unavailable' });
      const logged = errors.map((fields) => String((fields.err as Error | undefined)?.message));
      expect(logged.some((message) => /closed for good/.test(message) && /retryStrategy/.test(message))).toBe(
        true,
      );
    },
  );
});
