// The Redis ordering scripts (adapters/redis-ordering.ts) on a real redis-server: the lease hash keeps its owner's
// first entry past the lease or hold, for a bounded time, and a hash of an earlier version (without `until`, or
// without `run`) is still honoured.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { OrderingStore } from 'workforce-webhooks';
import { createRedisStore } from 'workforce-webhooks/redis';
import { LAPSED_KEPT_MS } from '../../src/ordering-store.js';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';

const DAY = 24 * 60 * 60 * 1000;

const setUp = () => {
  const client = connectRedis();
  const prefix = `${uniqueName('ordering')}:`;
  const store = createRedisStore({ client, prefix });
  if (store.ordering === undefined) throw new Error('the Redis store has no ordering');
  const key = crypto.randomUUID();
  return { client, keys: store.ordering as OrderingStore, key, lease: `${prefix}lease:{${key}}` };
};

describe.skipIf(!redisUrl)('Redis ordering scripts', () => {
  it('keeps owner and first entry LAPSED_KEPT_MS past the lease or hold, and deletes them on leave', async () => {
    const { client, keys, key, lease } = setUp();
    await keys.enter(key, 'failing', 30_000);
    const entered = await client.hgetall(lease);
    expect(entered).toMatchObject({ owner: 'failing', since: expect.any(String) });
    expect(Number(entered.until) - Number(entered.since)).toBe(30_000);
    const leaseTtl = await client.pttl(lease);
    expect(leaseTtl).toBeGreaterThan(LAPSED_KEPT_MS);
    expect(leaseTtl).toBeLessThanOrEqual(30_000 + LAPSED_KEPT_MS);

    expect(await keys.hold(key, 'failing', 100)).toBe(true);
    await sleep(200);
    // The hold ended: the hash is kept (for its retry), its TTL now counted from the hold's end.
    const held = await client.hgetall(lease);
    expect(held).toEqual({
      owner: 'failing',
      since: entered.since,
      until: String(Number(entered.since) + 100),
    });
    expect(await client.pttl(lease)).toBeLessThanOrEqual(LAPSED_KEPT_MS);
    expect((await keys.enter(key, 'failing', 30_000)).status).toBe('entered');
    expect((await client.hgetall(lease)).since).toBe(entered.since);
    expect(await keys.leave(key, 'failing', undefined, DAY)).toBe(true);
    expect(await client.exists(lease)).toBe(0);
  });

  it("honours a lease hash written before `until` was kept (a rolling deploy): busy until the key's TTL", async () => {
    const { client, keys, key, lease } = setUp();
    await client.hset(lease, 'owner', 'old-instance', 'since', String(Date.now()));
    await client.pexpire(lease, 300);
    const busy = await keys.enter(key, 'newer', 30_000);
    expect(busy.status === 'busy' && busy.retryInMs > 0 && busy.retryInMs <= 301).toBe(true);
    await sleep(350);
    expect((await keys.enter(key, 'newer', 30_000)).status).toBe('entered');
  });

  it('lets a run of the owner take a lease hash written before runs were kept, keeping its first entry', async () => {
    const { client, keys, key, lease } = setUp();
    const since = String(Date.now() - 1000);
    await client.hset(lease, 'owner', 'event', 'since', since, 'until', String(Date.now() + 30_000));
    await client.pexpire(lease, 30_000 + LAPSED_KEPT_MS);
    expect((await keys.enter(key, 'newer', 30_000, 'run-9')).status).toBe('busy');
    expect((await keys.enter(key, 'event', 30_000, 'run-2')).status).toBe('entered');
    expect(await client.hgetall(lease)).toMatchObject({ owner: 'event', run: 'run-2', since });
    expect((await keys.enter(key, 'event', 30_000, 'run-3')).status).toBe('busy');
    // A hold clears the run, as an earlier version wrote it: the event's next run takes it.
    expect(await keys.hold(key, 'event', 60_000, 'run-2')).toBe(true);
    expect(await client.hgetall(lease)).toEqual({
      owner: 'event',
      since,
      until: String(Number(since) + 60_000),
    });
    expect((await keys.enter(key, 'event', 30_000, 'run-3')).status).toBe('entered');
  });
});
