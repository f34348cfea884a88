// The Redis store and its ordering against a real redis-server, as the README ("Running several instances", "How the
// store works", "Ordering") says: key prefixes, script-cache loss, watermark order, stale tokens, odd ids, and a Redis
// that is full, read-only, silent or restarted empty.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { createReceiver, silentLogger } from 'workforce-webhooks';
import { createRedisStore } from 'workforce-webhooks/redis';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { markOf } from '../../src/ordering-mark.js';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';
import { hasRedisServer, type RedisServer, startRedisServer } from '../setup/redis-server.js';

const DAY = 86_400_000;
const secret = 'whsec_redis_pins';
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
const ownServer = async (): Promise<RedisServer> => {
  const server = await startRedisServer();
  cleanups.push(() => server.dispose());
  return server;
};
const claimed = (claim: { status: string; token?: string }): string => {
  if (claim.status !== 'claimed' || claim.token === undefined)
    throw new Error(`expected a claim, got ${claim.status}`);
  return claim.token;
};
const bodyOf = (text: string): Uint8Array => new TextEncoder().encode(text);

describe.skipIf(!redisUrl)('Redis store: keys, scripts, marks and tokens', () => {
  it('applies both an ioredis keyPrefix and the store prefix to every key, scripts and fallback EVAL included', async () => {
    const keyPrefix = `${uniqueName('kp')}:`;
    const client = connectRedis(redisUrl, { keyPrefix });
    const plain = connectRedis();
    const store = createRedisStore({ client, prefix: 'p:' });
    await plain.script('FLUSH');
    const id = crypto.randomUUID();
    const token = claimed(await store.claim(id, 30_000, 'rec'));
    expect(await plain.get(`${keyPrefix}p:${id}`)).toBe(token);
    expect((await store.ordering!.enter('rec', id, 30_000, 'r1')).status).toBe('entered');
    expect(await plain.exists(`${keyPrefix}p:lease:{rec}`)).toBe(1);
    const mark = markOf({ id, occurredAt: '2026-01-01T00:00:00Z' })!;
    expect(await store.ordering!.leave('rec', id, mark, DAY, 'r1')).toBe(true);
    expect(await plain.get(`${keyPrefix}p:mark:{rec}`)).toBe(mark);
    expect(await store.complete(id, token, DAY)).toBe(true);
    expect(await plain.get(`${keyPrefix}p:${id}`)).toBe('done');
    expect(await store.claim(id, 30_000, 'rec')).toEqual({ status: 'done' });
  });

  it('runs every ordering script again after SCRIPT FLUSH (NOSCRIPT, then EVAL)', async () => {
    const client = connectRedis();
    const store = createRedisStore({ client, prefix: `${uniqueName('noscript-ord')}:` });
    const keys = store.ordering!;
    await client.script('FLUSH');
    expect((await keys.enter('k', 'a', 30_000, 'r')).status).toBe('entered');
    await client.script('FLUSH');
    expect(await keys.renew('k', 'a', 'r', 30_000)).toBe(true);
    await client.script('FLUSH');
    expect(await keys.hold('k', 'a', 60_000, 'r')).toBe(true);
    await client.script('FLUSH');
    const mark = markOf({ id: 'a', occurredAt: '2026-01-01T00:00:00Z' })!;
    expect(await keys.leave('k', 'a', mark, DAY)).toBe(true);
    expect(await keys.watermark('k')).toBe(mark);
    await client.script('FLUSH');
    const id = crypto.randomUUID();
    const token = claimed(await store.claim(id, 30_000));
    await client.script('FLUSH');
    expect(await store.release(id, token)).toBe(true);
  });

  it('compares watermarks as instants: offsets, fractions below the millisecond, ties by event id', async () => {
    const store = createRedisStore({ client: connectRedis(), prefix: `${uniqueName('marks')}:` });
    const keys = store.ordering!;
    const leave = async (id: string, occurredAt: string) => {
      await keys.enter('r', id, 30_000, 'x');
      await keys.leave('r', id, markOf({ id, occurredAt }), DAY, 'x');
      return keys.watermark('r');
    };
    const a = markOf({ id: 'b', occurredAt: '2026-05-01T12:00:00+02:00' });
    expect(await leave('b', '2026-05-01T12:00:00+02:00')).toBe(a);
    // 10:30Z is after 12:00+02:00 (10:00Z) although it reads earlier.
    const later = markOf({ id: 'a', occurredAt: '2026-05-01T10:30:00Z' });
    expect(await leave('a', '2026-05-01T10:30:00Z')).toBe(later);
    // 12:15+02:00 is 10:15Z: older, the watermark stays.
    expect(await leave('c', '2026-05-01T12:15:00+02:00')).toBe(later);
    // Same instant, written otherwise: tie broken by id ('a' < 'b').
    const tie = markOf({ id: 'b', occurredAt: '2026-05-01T11:30:00+01:00' });
    expect(await leave('b', '2026-05-01T11:30:00+01:00')).toBe(tie);
    expect(await leave('a', '2026-05-01T10:30:00.000Z')).toBe(tie);
    // Microseconds count: .0000011 > .000001.
    const micro = markOf({ id: 'a', occurredAt: '2026-05-01T10:30:00.0000011Z' });
    expect(await leave('a', '2026-05-01T10:30:00.0000011Z')).toBe(micro);
    expect(await leave('z', '2026-05-01T10:30:00.000001Z')).toBe(micro);
  });

  it("keeps a done mark and another owner's lease against a stale token (renew, complete, release)", async () => {
    const client = connectRedis();
    const prefix = `${uniqueName('tokens')}:`;
    const store = createRedisStore({ client, prefix });
    const id = crypto.randomUUID();
    const first = claimed(await store.claim(id, 100));
    await sleep(250); // the lease lapses
    const second = claimed(await store.claim(id, 30_000));
    expect(await store.renew(id, first, 30_000)).toBe(false);
    expect(await store.complete(id, first, DAY)).toBe(false);
    expect(await store.release(id, first)).toBe(false);
    expect(await client.get(`${prefix}${id}`)).toBe(second);
    expect(await store.complete(id, second, DAY)).toBe(true);
    const ttl = await client.pttl(`${prefix}${id}`);
    expect(await store.complete(id, first, 1000)).toBe(false);
    expect(await store.renew(id, second, 1000)).toBe(false);
    expect(await client.get(`${prefix}${id}`)).toBe('done');
    expect(await client.pttl(`${prefix}${id}`)).toBeGreaterThan(ttl - 5000);
  });

  it('stores ids with colons, spaces and non-ASCII as they are, one key each', async () => {
    const client = connectRedis();
    const prefix = `${uniqueName('ids')}:`;
    const store = createRedisStore({ client, prefix });
    const ids = ['a:b', 'a', 'a:b:', ' x ', 'é\u{1F600}', 'x'.repeat(100_000)];
    for (const id of ids) claimed(await store.claim(id, 30_000));
    for (const id of ids) expect(await store.claim(id, 30_000)).toEqual({ status: 'in_progress' });
    expect(await client.get(`${prefix}é\u{1F600}`)).not.toBeNull();
  });

  it('answers a claim WRONGTYPE (503 at the receiver) when another app made the id key a hash', async () => {
    const client = connectRedis();
    const prefix = `${uniqueName('wrongtype')}:`;
    const store = createRedisStore({ client, prefix });
    const id = crypto.randomUUID();
    await client.hset(`${prefix}${id}`, 'f', 'v');
    await expect(store.claim(id, 30_000)).rejects.toThrow(/WRONGTYPE/);
    await expect(store.complete(id, 'token', DAY)).rejects.toThrow(/WRONGTYPE/);
  });
});

describe.skipIf(!redisUrl || !hasRedisServer())(
  'Redis store on a Redis that is full, read-only, silent or restarted',
  () => {
    it('answers 503 while Redis is out of memory (noeviction), releases under OOM, and serves again once there is room', async () => {
      const server = await ownServer();
      const client = connectRedis(server.url);
      const store = createRedisStore({ client });
      const receiver = createReceiver({ secret, store, logger: silentLogger });
      let runs = 0;
      receiver.on('leave.approved', () => {
        runs += 1;
      });
      cleanups.push(() => receiver.close({ timeoutMs: 1000 }));
      const held = crypto.randomUUID();
      const token = claimed(await store.claim(held, 30_000));
      await client.config('SET', 'maxmemory', '1');
      const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
      const first = await receiver.handle({
        method: 'POST',
        headers: delivery.headers,
        body: bodyOf(delivery.body),
      });
      expect(first.status).toBe(503);
      expect(await store.release(held, token)).toBe(true);
      await client.config('SET', 'maxmemory', '0');
      const retry = await receiver.handle({
        method: 'POST',
        headers: delivery.headers,
        body: bodyOf(delivery.body),
      });
      expect(retry.status).toBe(202);
      await expect.poll(() => runs).toBe(1);
    });

    it('answers 503 on a read-only replica, never 2xx without a claim', async () => {
      const primary = await ownServer();
      const replica = await ownServer();
      const client = connectRedis(replica.url);
      await client.replicaof('127.0.0.1', String(primary.port));
      const store = createRedisStore({ client });
      await expect(store.claim(crypto.randomUUID(), 30_000)).rejects.toThrow(/READONLY/);
      const receiver = createReceiver({ secret, store, logger: silentLogger, ordering: {} });
      receiver.on('leave.approved', () => {});
      cleanups.push(() => receiver.close({ timeoutMs: 1000 }));
      const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
      const answer = await receiver.handle({
        method: 'POST',
        headers: delivery.headers,
        body: bodyOf(delivery.body),
      });
      expect(answer.status).toBe(503);
    });

    it('answers an ordered claim 503 within the deadline while Redis is silent, releases the late claim, then serves once', {
      timeout: 30_000,
    }, async () => {
      const server = await ownServer();
      const client = connectRedis(server.url);
      const store = createRedisStore({ client });
      const receiver = createReceiver({ secret, store, logger: silentLogger, ordering: {} });
      let runs = 0;
      receiver.on('leave.approved', () => {
        runs += 1;
      });
      cleanups.push(() => receiver.close({ timeoutMs: 1000 }));
      const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
      await client.ping();
      server.pause();
      let answer: number;
      try {
        const started = Date.now();
        answer = (
          await receiver.handle({ method: 'POST', headers: delivery.headers, body: bodyOf(delivery.body) })
        ).status;
        expect(Date.now() - started).toBeLessThan(8000);
      } finally {
        server.resume();
      }
      expect(answer).toBe(503);
      // The stalled SET lands on resume and is released: the retry is taken, not held off 409 for a lease.
      await expect.poll(() => client.exists(`wfwh:${delivery.event.id}`), { timeout: 5000 }).toBe(0);
      const retry = await receiver.handle({
        method: 'POST',
        headers: delivery.headers,
        body: bodyOf(delivery.body),
      });
      expect(retry.status).toBe(202);
      await expect.poll(() => runs).toBe(1);
    });

    it('a restarted (emptied) Redis: the lease is re-taken by renew, the done mark lands by complete', async () => {
      const server = await ownServer();
      const client = connectRedis(server.url);
      const store = createRedisStore({ client });
      const id = crypto.randomUUID();
      const token = claimed(await store.claim(id, 30_000));
      await server.stop();
      await server.start();
      await expect.poll(() => client.ping().catch(() => 'down'), { timeout: 10_000 }).toBe('PONG');
      expect(await store.renew(id, token, 30_000)).toBe(true);
      expect(await client.get(`wfwh:${id}`)).toBe(token);
      expect(await store.complete(id, token, DAY)).toBe(true);
      expect(await store.claim(id, 30_000)).toEqual({ status: 'done' });
    });
  },
);
