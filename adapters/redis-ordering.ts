// The Redis side of ordering (spec rule 4): a per-key lease and watermark, each step one atomic Lua script.
import type { Cluster, Redis } from 'ioredis';
import { type KeyEntry, LAPSED_KEPT_MS, type OrderingStore } from '../src/ordering-store.js';
import { LUA_BELOW, runScript, type Script, script } from './redis-script.js';

// Redis's clock, so every instance agrees on leases; and a byte-wise comparison of marks (Lua's `<` follows the
// server's locale).
const PRELUDE = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
${LUA_BELOW}`;

// KEYS: lease (hash: owner, since, until), watermark. ARGV: owner, lease ms. The hash outlives `until` (the key's
// TTL) by LAPSED_KEPT_MS, so the same owner entering again keeps `since`, the start of its maxWaitMs bound; another
// owner takes the key once `until` passed, with its own `since`. A hash without `until` (written by an earlier
// version, during a rolling deploy) ends with its key.
const ENTER = `${PRELUDE}local held = redis.call('HMGET', KEYS[1], 'owner', 'until')
if held[1] and held[1] ~= ARGV[1] then
  local ends = held[2] and tonumber(held[2]) or now + redis.call('PTTL', KEYS[1])
  if ends >= now then return {0, ends - now + 1} end
end
local ends = now + tonumber(ARGV[2])
if held[1] == ARGV[1] then redis.call('HSET', KEYS[1], 'until', ends)
else redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'since', now, 'until', ends) end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) + ${LAPSED_KEPT_MS})
return {1, redis.call('GET', KEYS[2])}`;

// ARGV: owner, max wait ms: the lease now ends `max wait` after the owner first entered (maybe already), and the
// hash is kept LAPSED_KEPT_MS past that.
const HOLD = `${PRELUDE}local held = redis.call('HMGET', KEYS[1], 'owner', 'since')
if held[1] ~= ARGV[1] then return 0 end
local ends = tonumber(held[2]) + tonumber(ARGV[2])
redis.call('HSET', KEYS[1], 'until', ends)
redis.call('PEXPIRE', KEYS[1], math.max(1, ends - now + ${LAPSED_KEPT_MS}))
return 1`;

// ARGV: owner, mark ('' for none), watermark TTL ms: compare-and-set of the watermark, then the lease given up.
const LEAVE = `${PRELUDE}if ARGV[2] ~= '' then
  local current = redis.call('GET', KEYS[2])
  if not current or below(current, ARGV[2]) then redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3]) end
end
if redis.call('HGET', KEYS[1], 'owner') == ARGV[1] then redis.call('DEL', KEYS[1]) return 1 end
return 0`;

const scripts = { enter: script(ENTER), hold: script(HOLD), leave: script(LEAVE) };

/** The Redis ordering store and the key its claims read the watermark from. */
export interface RedisOrdering {
  readonly ordering: OrderingStore;
  /** The Redis key of `key`'s watermark. */
  watermarkKey(key: string): string;
}

/**
 * The ordering half of `createRedisStore`: keys `<prefix>lease:{<key>}` (owner, since, until; kept a day past
 * until) and `<prefix>mark:{<key>}` (one hash slot, for Redis Cluster).
 * @example
 * const { ordering } = createRedisOrdering({ client, prefix: 'wfwh:' });
 */
export function createRedisOrdering({
  client,
  prefix,
}: {
  readonly client: Redis | Cluster;
  readonly prefix: string;
}): RedisOrdering {
  const leaseKey = (key: string): string => `${prefix}lease:{${key}}`;
  const watermarkKey = (key: string): string => `${prefix}mark:{${key}}`;
  const run = (which: Script, key: string, ...args: (string | number)[]): Promise<unknown> =>
    runScript(client, which, [leaseKey(key), watermarkKey(key)], args);
  const ms = (value: number): number => Math.max(1, Math.ceil(value));

  const ordering: OrderingStore = {
    async enter(key, owner, leaseMs) {
      const [entered, value] = (await run(scripts.enter, key, owner, ms(leaseMs))) as [number, unknown];
      if (entered === 1)
        return {
          status: 'entered',
          watermark: value === null || value === undefined ? undefined : String(value),
        };
      return { status: 'busy', retryInMs: Math.max(1, Number(value)) } satisfies KeyEntry;
    },
    hold: async (key, owner, maxWaitMs) => (await run(scripts.hold, key, owner, ms(maxWaitMs))) === 1,
    leave: async (key, owner, mark, ttlMs) =>
      (await run(scripts.leave, key, owner, mark ?? '', ms(ttlMs))) === 1,
    async watermark(key) {
      const value = await client.call('GET', watermarkKey(key));
      return value === null ? undefined : String(value);
    },
  };
  return { ordering, watermarkKey };
}
