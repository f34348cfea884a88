// A Redis that evicts keys when full (maxmemory-policy allkeys-lru, common on managed Redis) drops done ids and claims,
// so duplicates run again without a word: the store and the queue read the policy once and warn once per Redis, with
// what it breaks and the fix; a Redis with noeviction (or one that will not say) gets no line.
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createMemoryStore, createReceiver, type Logger } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createRedisStore } from 'workforce-webhooks/redis';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';
import { hasRedisServer, type RedisServer, startRedisServer } from '../setup/redis-server.js';

const secret = 'whsec_redis_eviction_policy';
const encoder = new TextEncoder();
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function recordingLogger(): { logger: Logger; lines: { level: string; msg: string }[] } {
  const lines: { level: string; msg: string }[] = [];
  const keep = (level: string) => (_fields: object, msg?: string) =>
    void lines.push({ level, msg: msg ?? '' });
  return { logger: { debug() {}, info() {}, warn: keep('warn'), error: keep('error') }, lines };
}
const evictionLines = (lines: { level: string; msg: string }[]) =>
  lines.filter(({ msg }) => msg.includes('maxmemory-policy'));

// A redis-server of the test's own, set to evict as a managed Redis often is.
async function evictingRedis(policy: string): Promise<RedisServer> {
  const server = await startRedisServer();
  cleanups.push(() => server.dispose());
  const admin = new Redis(server.url);
  await admin.config('SET', 'maxmemory-policy', policy);
  await admin.quit();
  return server;
}

const client = (url: string): Redis => {
  const each = connectRedis(url);
  cleanups.push(() => each.quit().catch(() => each.disconnect()));
  return each;
};

describe.skipIf(!hasRedisServer())('the Redis eviction policy', () => {
  it('an evicting Redis is said once, at warn level, with what it breaks and the fix, however many stores use it', {
    timeout: 60_000,
  }, async () => {
    const server = await evictingRedis('allkeys-lru');
    const { logger, lines } = recordingLogger();
    const first = client(server.url);
    const second = client(server.url);
    // Ready first: each store then reads the policy as it is made, before any command the test sends.
    await Promise.all([first.ping(), second.ping()]);
    const stores = [
      createRedisStore({ client: first, logger }),
      createRedisStore({ client: second, logger }),
    ];
    await vi.waitFor(() => expect(evictionLines(lines)).toHaveLength(1), { timeout: 20_000, interval: 50 });
    // Both clients answered a command sent after their own read of the policy: both reads are in.
    await Promise.all([first.ping(), second.ping()]);
    // The store still works on it.
    await expect(stores[1]!.claim(uniqueName('event'), 30_000)).resolves.toMatchObject({ status: 'claimed' });

    const said = evictionLines(lines);
    expect(said).toHaveLength(1);
    expect(said[0]!.level).toBe('warn');
    expect(said[0]!.msg).toContain('maxmemory-policy allkeys-lru');
    expect(said[0]!.msg).toContain('a redelivered event runs its handlers again');
    expect(said[0]!.msg).toContain('CONFIG SET maxmemory-policy noeviction');
  });

  it('the BullMQ queue says it too, in the receiver logger, once with the store on the same Redis', {
    timeout: 60_000,
  }, async () => {
    const server = await evictingRedis('volatile-lru');
    const { logger, lines } = recordingLogger();
    const connection = client(server.url);
    await connection.ping();
    const receiver = createReceiver({
      secret,
      store: createRedisStore({ client: connection, logger }),
      queue: createBullmqQueue({ connection, name: uniqueName('eviction') }),
      logger,
    }).on('leave.approved', () => {});
    cleanups.push(() => receiver.close({ timeoutMs: 2000 }));
    const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
    const answer = await receiver.handle({
      method: 'POST',
      headers: delivery.headers,
      body: encoder.encode(delivery.body),
    });
    expect(answer.status).toBe(202);
    await vi.waitFor(() => expect(evictionLines(lines)).toHaveLength(1), { timeout: 20_000, interval: 50 });
    await connection.ping();
    expect(evictionLines(lines)).toHaveLength(1);
    expect(evictionLines(lines)[0]!.msg).toContain('maxmemory-policy volatile-lru');
  });

  it('the queue alone on an evicting Redis says it once', { timeout: 60_000 }, async () => {
    const server = await evictingRedis('allkeys-lfu');
    const { logger, lines } = recordingLogger();
    const receiver = createReceiver({
      secret,
      store: createMemoryStore(),
      queue: createBullmqQueue({ connection: server.url, name: uniqueName('eviction-queue') }),
      logger,
    }).on('leave.approved', () => {});
    cleanups.push(() => receiver.close({ timeoutMs: 2000 }));
    await vi.waitFor(() => expect(evictionLines(lines)).toHaveLength(1), { timeout: 20_000, interval: 50 });
    expect(evictionLines(lines)[0]!.msg).toContain('maxmemory-policy allkeys-lfu');
    expect(evictionLines(lines)[0]!.msg).toContain('an accepted event is lost');
  });

  it('a Redis user that may not run INFO is not told anything, and the store works', {
    timeout: 60_000,
  }, async () => {
    const server = await evictingRedis('allkeys-lru');
    const admin = client(server.url);
    await admin.call('ACL', 'SETUSER', 'store', 'on', '>pw', '~*', '+@all', '-info');
    const { logger, lines } = recordingLogger();
    const limited = client(`redis://store:pw@127.0.0.1:${server.port}`);
    await limited.ping();
    const store = createRedisStore({ client: limited, logger });
    await expect(store.claim(uniqueName('event'), 30_000)).resolves.toMatchObject({ status: 'claimed' });
    await limited.ping();
    expect(evictionLines(lines)).toEqual([]);
    expect(lines).toEqual([]);
  });
});

describe.skipIf(!redisUrl)('a Redis with noeviction', () => {
  it('gets no line from the store or the queue', { timeout: 60_000 }, async () => {
    const { logger, lines } = recordingLogger();
    const connection = client(redisUrl);
    await connection.ping();
    const receiver = createReceiver({
      secret,
      store: createRedisStore({ client: connection, logger }),
      queue: createBullmqQueue({ connection, name: uniqueName('noeviction') }),
      logger,
    }).on('leave.approved', () => {});
    cleanups.push(() => receiver.close({ timeoutMs: 2000 }));
    const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
    const answer = await receiver.handle({
      method: 'POST',
      headers: delivery.headers,
      body: encoder.encode(delivery.body),
    });
    expect(answer.status).toBe(202);
    await connection.ping();
    expect(lines).toEqual([]);
  });
});
