// The Redis side of ordering (spec rule 4): a per-key lease and watermark, each step one atomic Lua script.
import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { type KeyEntry, LAPSED_KEPT_MS, type OrderingStore } from '../src/ordering-store.js';
import { LUA_BELOW, runScript, type Script, script } from './redis-script.js';

// A UTF-16 code unit of a surrogate pair standing alone (the `u` flag reads a pair as one code point).
const LONE_SURROGATE = /\p{Surrogate}/u;

// Redis's clock, so every instance agrees on leases; a byte-wise comparison of marks (Lua's `<` follows the
// server's locale); and the stored form of a run, which names its owner (its length first, so no owner's form is
// another's prefix). A version before runs, taking the key for another owner, leaves the previous owner's run in the
// hash: a run stored for another owner than the hash's is no run (a hold), not a live lease of the new owner.
const PRELUDE = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function runOf(owner, run) return #owner .. ':' .. owner .. run end
local function ownersRun(owner, stored)
  local prefix = #owner .. ':' .. owner
  return stored and stored:sub(1, #prefix) == prefix
end
${LUA_BELOW}`;

// KEYS: lease (hash: owner, run, since, until), watermark. ARGV: owner, lease ms, run ('' for none). The hash
// outlives `until` (the key's TTL) by LAPSED_KEPT_MS, so the same owner entering again keeps `since`, the start of
// its maxWaitMs bound; another owner takes the key once `until` passed, with its own `since`. Another run of the
// owner waits while the lease's run is live (its handlers still run), and takes a hold (no run) or a lapsed lease.
// Without a run, the owner's call renews whatever run has it. A hash without `until` (written by an earlier
// version, during a rolling deploy) ends with its key; one without `run`, or whose run is another owner's, is a hold
// (or was entered without one). The owner's own hash is first given its TTL, a write Redis out of memory allows
// (see HOLD): a failing event's retry takes its hold back as another event takes a lapsed key.
const ENTER = `${PRELUDE}local held = redis.call('HMGET', KEYS[1], 'owner', 'until', 'run')
if held[1] then
  local ends = held[2] and tonumber(held[2]) or now + redis.call('PTTL', KEYS[1])
  local other = held[1] ~= ARGV[1]
    or (ARGV[3] ~= '' and ownersRun(held[1], held[3]) and held[3] ~= runOf(ARGV[1], ARGV[3]))
  if other and ends >= now then return {0, ends - now + 1} end
end
if held[1] == ARGV[1] then redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) + ${LAPSED_KEPT_MS}) end
if held[1] ~= ARGV[1] then
  redis.call('DEL', KEYS[1])
  redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'since', now)
end
redis.call('HSET', KEYS[1], 'until', now + tonumber(ARGV[2]))
if ARGV[3] ~= '' then redis.call('HSET', KEYS[1], 'run', runOf(ARGV[1], ARGV[3])) end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) + ${LAPSED_KEPT_MS})
return {1, redis.call('GET', KEYS[2])}`;

// The lease is the owner's and, when ARGV[run] names a run, that run's.
const MINE = (run: number): string =>
  `held[1] == ARGV[1] and (ARGV[${run}] == '' or held[2] == runOf(ARGV[1], ARGV[${run}]))`;

// Redis out of memory refuses a script whose first write is one that may grow memory (HSET, SET), but not one that
// began with a write that cannot (DEL, PEXPIRE): taking a free or lapsed key begins with DEL, so it is never refused.
// The steps that keep a key its owner already has (renew, hold, a retry taking its hold back) rewrite the owner's
// hash in place, and begin with PEXPIRE, so that they are not refused either: else the key's lease would lapse to
// another event while its run still has it (its handlers, or its watermark write tried again).

// ARGV: owner, max wait ms, run ('' for any): the lease now ends `max wait` after the owner first entered (maybe
// already), idle (its run cleared), and the hash is kept LAPSED_KEPT_MS past that. PEXPIRE first (see above).
const HOLD = `${PRELUDE}local held = redis.call('HMGET', KEYS[1], 'owner', 'run', 'since')
if not (${MINE(3)}) then return 0 end
local ends = tonumber(held[3]) + tonumber(ARGV[2])
redis.call('PEXPIRE', KEYS[1], math.max(1, ends - now + ${LAPSED_KEPT_MS}))
redis.call('HSET', KEYS[1], 'until', ends)
redis.call('HDEL', KEYS[1], 'run')
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

// ARGV: owner, lease ms, run: the lease extended only while it is that run's (live, or lapsed and not taken: the
// hash is kept past `until`); never a hold, a free key or another run's lease. PEXPIRE first (see HOLD).
const RENEW = `${PRELUDE}local held = redis.call('HMGET', KEYS[1], 'owner', 'run')
if ARGV[3] == '' or not (${MINE(3)}) then return 0 end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) + ${LAPSED_KEPT_MS})
redis.call('HSET', KEYS[1], 'until', now + tonumber(ARGV[2]))
return 1`;

const scripts = { enter: script(ENTER), hold: script(HOLD), leave: script(LEAVE), renew: script(RENEW) };

// The hash tag of a record key, which puts its lease and watermark in one Redis Cluster slot. A `}` in the key ends
// the tag early (an empty tag when it comes first: the two keys in different slots, CROSSSLOT), and an empty key
// makes an empty tag, so such a key is tagged by its SHA-256, with a suffix no other key's name ends with. A key
// with a lone surrogate has no UTF-8 form: ioredis (and SHA-256 of the string) would write U+FFFD for it, and
// `'\uD800'`, `'\uD801'` and `'\uFFFD'` would share one lease and one watermark, so it is tagged by the SHA-256 of
// its UTF-16 code units, with a suffix of its own. Every other key is tagged as itself, as in every earlier version
// (a `{` is safe: the tag ends at the `}` after it).
const tagged = (key: string): string => {
  if (LONE_SURROGATE.test(key))
    return `{${createHash('sha256').update(Buffer.from(key, 'utf16le')).digest('hex')}}#utf16`;
  return key === '' || key.includes('}')
    ? `{${createHash('sha256').update(key).digest('hex')}}#sha256`
    : `{${key}}`;
};

/** The Redis ordering store and the key its claims read the watermark from. */
export interface RedisOrdering {
  readonly ordering: OrderingStore;
  /** The Redis key of `key`'s watermark. */
  watermarkKey(key: string): string;
}

/**
 * The ordering half of `createRedisStore`: keys `<prefix>lease:{<key>}` (owner, run, since, until; kept a day
 * past until) and `<prefix>mark:{<key>}` (one hash slot, for Redis Cluster; a key with a `}` is tagged by its
 * SHA-256 instead: `<prefix>lease:{<hex>}#sha256`, one with a lone surrogate by that of its UTF-16:
 * `<prefix>lease:{<hex>}#utf16`).
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
  const leaseKey = (key: string): string => `${prefix}lease:${tagged(key)}`;
  const watermarkKey = (key: string): string => `${prefix}mark:${tagged(key)}`;
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
    renew: async (key, owner, run, leaseMs) =>
      (await call(scripts.renew, key, owner, ms(leaseMs), run)) === 1,
  };
  return { ordering, watermarkKey };
}
