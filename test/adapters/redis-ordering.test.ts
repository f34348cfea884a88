// The Redis ordering scripts (adapters/redis-ordering.ts) on a real redis-server: the lease hash keeps its owner's
// first entry past the lease or hold, for a bounded time, and a hash of an earlier version (without `until`, or
// without `run`, or with the run of an owner before it) is still honoured.
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { OrderingStore } from 'workforce-webhooks';
import { createRedisStore } from 'workforce-webhooks/redis';
import { LUA_BELOW, runScript, script } from '../../adapters/redis-script.js';
import { LAPSED_KEPT_MS } from '../../src/ordering-store.js';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';

const DAY = 24 * 60 * 60 * 1000;

const PRELUDE = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
${LUA_BELOW}`;

// adapters/redis-ordering.ts at e62ee5f^, the version before runs, which a rolling deploy replaces: it never clears
// the `run` field this version writes.
const OLD_ENTER = script(`${PRELUDE}local held = redis.call('HMGET', KEYS[1], 'owner', 'until')
if held[1] and held[1] ~= ARGV[1] then
  local ends = held[2] and tonumber(held[2]) or now + redis.call('PTTL', KEYS[1])
  if ends >= now then return {0, ends - now + 1} end
end
local ends = now + tonumber(ARGV[2])
if held[1] == ARGV[1] then redis.call('HSET', KEYS[1], 'until', ends)
else redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'since', now, 'until', ends) end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) + ${LAPSED_KEPT_MS})
return {1, redis.call('GET', KEYS[2])}`);

const OLD_HOLD = script(`${PRELUDE}local held = redis.call('HMGET', KEYS[1], 'owner', 'since')
if held[1] ~= ARGV[1] then return 0 end
local ends = tonumber(held[2]) + tonumber(ARGV[2])
redis.call('HSET', KEYS[1], 'until', ends)
redis.call('PEXPIRE', KEYS[1], math.max(1, ends - now + ${LAPSED_KEPT_MS}))
return 1`);

const setUp = () => {
  const client = connectRedis();
  const prefix = `${uniqueName('ordering')}:`;
  const store = createRedisStore({ client, prefix });
  if (store.ordering === undefined) throw new Error('the Redis store has no ordering');
  const key = crypto.randomUUID();
  return { client, keys: store.ordering as OrderingStore, key, prefix, lease: `${prefix}lease:{${key}}` };
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

  it('names the keys of a record key as every earlier version did, and tags one with a `}` by its SHA-256', async () => {
    const { client, keys, key, lease, prefix } = setUp();
    await keys.enter(key, 'event', 30_000, 'run-1');
    expect(await client.hget(lease, 'owner')).toBe('event');
    const braced = `}${key}`;
    const tag = createHash('sha256').update(braced).digest('hex');
    await keys.enter(braced, 'event', 30_000, 'run-1');
    await keys.leave(braced, 'event', 'a mark', DAY);
    // One tag for both keys (one Cluster slot), and a name no record key's own keys have (they end with `}`).
    expect(await client.get(`${prefix}mark:{${tag}}#sha256`)).toBe('a mark');
    expect(await keys.watermark(braced)).toBe('a mark');
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
    // The run is stored with the owner it belongs to (its length first).
    expect(await client.hgetall(lease)).toMatchObject({ owner: 'event', run: '5:eventrun-2', since });
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

  // An earlier instance that takes a key a run of this version let lapse keeps that run's name in the hash: read as
  // the new owner's run, its hold would look like another run's live lease.
  it("gives a failing event's hold, made by a version before runs, to the event's next run at once", async () => {
    const { client, keys, key, prefix } = setUp();
    const both = [`${prefix}lease:{${key}}`, `${prefix}mark:{${key}}`];
    // A run of this version takes the key and dies (kill -9 mid-deploy, or handlers past maxWaitMs): it lapses.
    expect((await keys.enter(key, 'older', 100, 'new-instance:1')).status).toBe('entered');
    await sleep(250);
    // An earlier instance takes the lapsed key for the next event, whose handlers fail: it holds the key (30 s).
    expect(await runScript(client, OLD_ENTER, both, ['failing', 30_000])).toEqual([1, null]);
    expect(await runScript(client, OLD_HOLD, both, ['failing', 30_000])).toBe(1);
    expect((await keys.enter(key, 'newer', 30_000, 'new-instance:3')).status).toBe('busy');
    // The failing event's retry lands on an instance of this version: a run of the hold's owner takes it.
    expect((await keys.enter(key, 'failing', 30_000, 'new-instance:2')).status).toBe('entered');
    expect(await keys.renew?.(key, 'older', 'new-instance:1', 30_000)).toBe(false);
  });
});
