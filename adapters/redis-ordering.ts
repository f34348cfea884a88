// The Redis side of ordering (spec rule 4): a per-key lease and watermark, each step one atomic Lua script.
import type { Cluster, Redis } from 'ioredis';
import { type KeyEntry, LAPSED_KEPT_MS, type OrderingStore } from '../src/ordering-store.js';
import { LUA_BELOW, runScript, type Script, script } from './redis-script.js';

// Redis's clock, so every instance agrees on leases; and a byte-wise comparison of marks (Lua's `<` follows the
// server's locale).
const PRELUDE = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
${LUA_BELOW}`;

// KEYS: lease (hash: owner, run, since, until), watermark. ARGV: owner, lease ms, run ('' for none). The hash
// outlives `until` (the key's TTL) by LAPSED_KEPT_MS, so the same owner entering again keeps `since`, the start of
// its maxWaitMs bound; another owner takes the key once `until` passed, with its own `since`. Another run of the
// owner waits while the lease's run is live (its handlers still run), and takes a hold (no run) or a lapsed lease.
// Without a run, the owner's call renews whatever run has it. A hash without `until` (written by an earlier
// version, during a rolling deploy) ends with its key; one without `run` is a hold (or was entered without one).
const ENTER = `${PRELUDE}local held = redis.call('HMGET', KEYS[1], 'owner', 'until', 'run')
if held[1] then
  local ends = held[2] and tonumber(held[2]) or now + redis.call('PTTL', KEYS[1])
  local other = held[1] ~= ARGV[1]
    or (ARGV[3] ~= '' and held[3] and held[3] ~= '' and held[3] ~= ARGV[3])
  if other and ends >= now then return {0, ends - now + 1} end
end
if held[1] ~= ARGV[1] then
  redis.call('DEL', KEYS[1])
  redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'since', now)
end
redis.call('HSET', KEYS[1], 'until', now + tonumber(ARGV[2]))
if ARGV[3] ~= '' then redis.call('HSET', KEYS[1], 'run', ARGV[3]) end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) + ${LAPSED_KEPT_MS})
return {1, redis.call('GET', KEYS[2])}`;

// The lease is the owner's and, when ARGV[run] names a run, that run's.
const MINE = (run: number): string =>
  `held[1] == ARGV[1] and (ARGV[${run}] == '' or held[2] == ARGV[${run}])`;

// ARGV: owner, max wait ms, run ('' for any): the lease now ends `max wait` after the owner first entered (maybe
// already), idle (its run cleared), and the hash is kept LAPSED_KEPT_MS past that.
const HOLD = `${PRELUDE}local held = redis.call('HMGET', KEYS[1], 'owner', 'run', 'since')
if not (${MINE(3)}) then return 0 end
local ends = tonumber(held[3]) + tonumber(ARGV[2])
redis.call('HSET', KEYS[1], 'until', ends)
redis.call('HDEL', KEYS[1], 'run')
redis.call('PEXPIRE', KEYS[1], math.max(1, ends - now + ${LAPSED_KEPT_MS}))
return 1`;

// ARGV: owner, mark ('' for none), watermark TTL ms, run ('' for any): compare-and-set of the watermark, then the
// lease given up.
const LEAVE = `${PRELUDE}if ARGV[2] ~= '' then
  local current = redis.call('GET', KEYS[2])
  if not current or below(current, ARGV[2]) then redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3]) end
end
local held = redis.call('HMGET', KEYS[1], 'owner', 'run')
if ${MINE(4)} then redis.call('DEL', KEYS[1]) return 1 end
return 0`;

const scripts = { enter: script(ENTER), hold: script(HOLD), leave: script(LEAVE) };

/** The Redis ordering store and the key its claims read the watermark from. */
export interface RedisOrdering {
  readonly ordering: OrderingStore;
  /** The Redis key of `key`'s watermark. */
  watermarkKey(key: string): string;
}

/**
 * The ordering half of `createRedisStore`: keys `<prefix>lease:{<key>}` (owner, run, since, until; kept a day
 * past until) and `<prefix>mark:{<key>}` (one hash slot, for Redis Cluster).
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
  const call = (which: Script, key: string, ...args: (string | number)[]): Promise<unknown> =>
    runScript(client, which, [leaseKey(key), watermarkKey(key)], args);
  const ms = (value: number): number => Math.max(1, Math.ceil(value));

  const ordering: OrderingStore = {
    async enter(key, owner, leaseMs, run) {
      const [entered, value] = (await call(scripts.enter, key, owner, ms(leaseMs), run ?? '')) as [
        number,
        unknown,
      ];
      if (entered === 1)
        return {
          status: 'entered',
          watermark: value === null || value === undefined ? undefined : String(value),
        };
      return { status: 'busy', retryInMs: Math.max(1, Number(value)) } satisfies KeyEntry;
    },
    hold: async (key, owner, maxWaitMs, run) =>
      (await call(scripts.hold, key, owner, ms(maxWaitMs), run ?? '')) === 1,
    leave: async (key, owner, mark, ttlMs, run) =>
      (await call(scripts.leave, key, owner, mark ?? '', ms(ttlMs), run ?? '')) === 1,
    async watermark(key) {
      const value = await client.call('GET', watermarkKey(key));
      return value === null ? undefined : String(value);
    },
  };
  return { ordering, watermarkKey };
}
