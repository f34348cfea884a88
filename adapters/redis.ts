// The Redis dedupe store: one shared claim per event id across every receiver instance, on the user's ioredis client.
import type { Cluster, Redis } from 'ioredis';
import { ConfigurationError, WebhookError } from '../src/errors.js';
import { createConsoleLogger, type Logger } from '../src/logger.js';
import { type ClaimResult, DEFAULT_DONE_TTL_MS, type DedupeStore } from '../src/store.js';
import { connectionFailure, watchConnection, withoutPassword } from './redis-connection.js';
import { watchEviction } from './redis-eviction.js';
import { createRedisOrdering } from './redis-ordering.js';
import { runScript, type Script, script } from './redis-script.js';
import { ignoredUrlOption, notRedisUrl } from './redis-url.js';

/** Options of `createRedisStore`. */
export interface RedisStoreOptions {
  /**
   * Your ioredis client; the store never closes it. Give it `maxRetriesPerRequest: 1` (or `enableOfflineQueue:
   * false`, or a `commandTimeout`) so that a Redis outage fails claims at once and deliveries get 503 instead of
   * waiting past the sender's 10 s. A `Cluster` also needs `enableOfflineQueue: false` of its own: its queue holds
   * commands while every node is away, whatever its `redisOptions`. Keep a `retryStrategy` (a Cluster's:
   * `clusterRetryStrategy`) that always answers a delay (ioredis's default does): one that gives up leaves every
   * later delivery 503 until a restart.
   */
  readonly client: Redis | Cluster;
  /** Prepended to every key (`wfwh:<event id>`). Default `wfwh:`. */
  readonly prefix?: string;
  /** How long a done id is remembered when `complete` is given no TTL of its own. Default 72 h. */
  readonly doneTtlMs?: number;
  /** Lease used when `claim` is given none. Default 30 000 (the receiver passes its own `leaseMs`). */
  readonly leaseMs?: number;
  /**
   * Where the client's connection failures are said, with the fix (a wrong password, host or port, TLS on one side
   * only), once each per Redis address until a client of it is ready again; the first store to hear one says it.
   * Default: the console; `silentLogger` drops them.
   */
  readonly logger?: Logger;
}

// A done id holds this value; a claimed id holds its owner's token (a uuid, never equal to it).
const DONE = 'done';

// Compare-on-token scripts: Redis 7.0 has no DELEX / SET IFEQ, so read-compare-write runs atomically in Lua.
// Complete also marks the id done when the owner's lease lapsed and nobody took it (the key is gone), as renew
// re-takes it: a done mark held up past the lease (Redis silent after the 202) still lands, so a redelivery stays a
// duplicate. Another owner's token, or a done mark, is left as it is.
const COMPLETE = `local held = redis.call('GET', KEYS[1])
if held == ARGV[1] or not held then redis.call('SET', KEYS[1], '${DONE}', 'PX', ARGV[2]) return 1 end return 0`;
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) return 1 end return 0`;
// Renew also re-takes the owner's lease when it lapsed and nobody took the id (the key is gone): a handler that
// held the event loop past its lease keeps its claim, instead of letting the next copy run beside it.
const RENEW = `local held = redis.call('GET', KEYS[1])
if held == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end
if not held then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end return 0`;

// The client settings that decide what a command does while Redis is unreachable (a Cluster nests a node's).
interface ClientSettings {
  readonly maxRetriesPerRequest?: number | null;
  readonly enableOfflineQueue?: boolean;
  readonly commandTimeout?: number;
  readonly redisOptions?: ClientSettings;
  readonly clusterRetryStrategy?: unknown;
  readonly retryStrategy?: unknown;
}

// Why a client cannot serve the store, or undefined: its commands would wait for Redis to come back however long it
// is away (a claim would then wait out the receiver's storeTimeoutMs on every delivery, and pile up in the client's
// offline queue), or it would never come back after one disconnect.
const unfit = (client: Redis | Cluster): string | undefined => {
  const settings = (client.options ?? {}) as ClientSettings;
  const url = notRedisUrl(client);
  if (url !== undefined) return `the Redis store's client cannot reach Redis: ${url}`;
  const ignored = ignoredUrlOption(client);
  if (ignored !== undefined) return `the Redis store's client cannot reach the Redis you meant: ${ignored}`;
  // ioredis reconnects only through a retry strategy function (a Cluster: its clusterRetryStrategy): without one,
  // the first blip (for a Cluster: every node lost at once) ends the client, and every delivery after it is answered
  // 503 until the process restarts.
  if (client.isCluster && typeof settings.clusterRetryStrategy !== 'function')
    return (
      "the Redis store's Cluster client has no clusterRetryStrategy, so it would never reconnect once it lost every " +
      'node and every delivery after it would be answered 503 until a restart. Leave clusterRetryStrategy out ' +
      '(ioredis reconnects by default) or give it a function that always returns a delay, e.g. ' +
      'clusterRetryStrategy: (times) => Math.min(100 + times * 2, 2000)'
    );
  // A Cluster queues commands itself while every node is away and retries the Cluster for ever (its own
  // clusterRetryStrategy): neither a node's maxRetriesPerRequest nor its commandTimeout reaches that queue.
  if (client.isCluster && settings.enableOfflineQueue !== false)
    return (
      "the Redis store's Cluster client has enableOfflineQueue on (its default), so while the Cluster is down every " +
      "claim would wait in the Cluster's offline queue, whatever its redisOptions say, instead of failing at once. " +
      'Give the store a Cluster client with enableOfflineQueue: false, e.g. new Cluster(nodes, { enableOfflineQueue: ' +
      'false, redisOptions: { maxRetriesPerRequest: 1 } })'
    );
  if (!client.isCluster && typeof settings.retryStrategy !== 'function')
    return (
      'the Redis store client has no retryStrategy, so it would never reconnect after its first disconnect and every ' +
      'delivery after it would be answered 503 until a restart. Leave retryStrategy out (ioredis reconnects by ' +
      'default) or give it a function that always returns a delay, e.g. retryStrategy: (times) => Math.min(times * 50, 2000)'
    );
  const { maxRetriesPerRequest, commandTimeout } = settings.redisOptions ?? settings;
  if (maxRetriesPerRequest === null && settings.enableOfflineQueue !== false && !commandTimeout)
    // BullMQ's advice for its workers; for the store it would hold every delivery while Redis is away.
    return (
      'the Redis store client has maxRetriesPerRequest: null, so while Redis is down every claim would wait out the ' +
      "receiver's storeTimeoutMs and pile up in the client's offline queue instead of failing at once. " +
      'Give the store its own client, e.g. client.duplicate({ maxRetriesPerRequest: 1 })'
    );
  return undefined;
};

const scripts = { complete: script(COMPLETE), release: script(RELEASE), renew: script(RENEW) };

// A Cluster puts a key in the slot of the text between its first `{` and the first `}` after it, or of the whole key
// when there is none or it is empty: a prefix with a `{` it does not close around some text would put a record's
// lease and watermark (`<prefix>lease:{<key>}`, `<prefix>mark:{<key>}`) in different slots.
const splitsSlots = (prefix: string): boolean => {
  const open = prefix.indexOf('{');
  if (open === -1) return false;
  const close = prefix.indexOf('}', open + 1);
  return close === -1 || close === open + 1;
};

/**
 * The dedupe store for several receiver instances: `SET key token NX PX lease GET` claims in one round trip,
 * compare-on-token Lua scripts complete, release and renew. Needs Redis 7.0 or later.
 * @example
 * const client = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: 1 });
 * createReceiver({ secret, store: createRedisStore({ client }) });
 */
export function createRedisStore({
  client,
  prefix = 'wfwh:',
  doneTtlMs = DEFAULT_DONE_TTL_MS,
  leaseMs = 30_000,
  logger = createConsoleLogger(),
}: RedisStoreOptions): DedupeStore {
  if (client === undefined || typeof client.call !== 'function')
    throw new ConfigurationError('createRedisStore needs `client`: an ioredis Redis or Cluster instance');
  const problem = unfit(client);
  if (problem !== undefined) throw new ConfigurationError(problem);
  if (client.isCluster && splitsSlots(prefix))
    throw new ConfigurationError(
      `the Redis store prefix ${JSON.stringify(prefix)} opens a hash tag ({) it does not close around a name, so on ` +
        "a Redis Cluster a record's ordering lease and watermark would fall in different slots and every ordered " +
        "event would fail with CROSSSLOT. Close the tag around a name (e.g. '{wfwh}:', all of the store's keys in " +
        "one slot) or leave braces out (e.g. 'wfwh:')",
    );
  for (const [name, value] of Object.entries({ doneTtlMs, leaseMs })) {
    if (!Number.isFinite(value) || value <= 0)
      throw new ConfigurationError(`Redis store ${name} must be a positive number`);
  }
  const connection = watchConnection(client, logger);
  // An evicting Redis drops done ids and claims when full: duplicates then run again, silently.
  watchEviction(client, logger);

  // A failed call said with its cause and the fix where the error alone hides it: a client that has ended (its
  // retryStrategy stopped reconnecting, or it was closed) fails every call for ever with ioredis's bare "Connection
  // is closed." while Redis itself may be up; a client that cannot connect fails it with "Reached the max retries";
  // a Redis user whose ACL keeps it from the store's commands, or a replica's address, fails every claim however
  // long the app waits.
  const explained = (failed: unknown): unknown => {
    // A refused login's error carries the password (its command's arguments): never handed on to a log with it.
    const error = withoutPassword(failed);
    if (client.status === 'end')
      return new WebhookError(
        'store_unavailable',
        "the Redis store's client has closed for good (its retryStrategy stopped reconnecting, or it was closed " +
          'with quit() or disconnect()), so every delivery is answered 503 until the process restarts. Give the ' +
          'store a client whose retryStrategy always returns a delay, and close it only after the receiver',
        { cause: error },
      );
    const message = error instanceof Error ? error.message : '';
    // A call that failed while the client cannot connect: said with why (a wrong password, address or TLS: a setup
    // to fix; else an outage), as the log of the delivery answered 503 would otherwise name only the call's failure.
    const { failure, tls, reached } = connection;
    const refused = message.startsWith('WRONGPASS') || message.startsWith('NOAUTH') ? error : failure;
    if (refused instanceof Error && (refused === error || client.status !== 'ready')) {
      const { kind, text } = connectionFailure(refused, tls, reached);
      return kind === 'unreachable'
        ? new WebhookError('store_unavailable', text, { cause: error })
        : Object.assign(new ConfigurationError(text), { cause: error });
    }
    if (message.startsWith('NOPERM'))
      return Object.assign(
        new ConfigurationError(
          `the Redis user may not run a command the store needs (${message}): grant it the store's commands on its ` +
            `keys, e.g. ACL SETUSER <user> ~${prefix}* +@read +@write +@scripting +time`,
        ),
        { cause: error },
      );
    if (message.startsWith('READONLY'))
      return new WebhookError(
        'store_unavailable',
        `Redis answered from a read-only replica (${message}): give the store the primary's address (a managed ` +
          "Redis's primary or writer endpoint, not a reader's); during a failover this passes once the client is on the new primary",
        { cause: error },
      );
    return error;
  };
  const run = async (which: Script, key: string, args: readonly (string | number)[]): Promise<boolean> => {
    try {
      return (await runScript(client, which, [key], args)) === 1;
    } catch (error) {
      throw explained(error);
    }
  };
  // Renewals in flight, by key. One re-sent as EVAL after a NOSCRIPT (Redis lost its scripts) reaches Redis behind a
  // release sent after it, when the release's own script was already loaded again: it would find the key gone, take
  // the released id back and hold off the sender's retry for a whole lease. A release that finds a renewal of its key
  // in flight releases again once that renewal took the id back. Looked up whatever the order the client reports the
  // answers in (the NOSCRIPT may be seen after the release's own answer); a renewal comes every third of a lease.
  const renewals = new Map<string, Promise<boolean>>();
  const renew = (key: string, args: readonly (string | number)[]): Promise<boolean> => {
    const pending = run(scripts.renew, key, args);
    renewals.set(key, pending);
    const landed = (): void => {
      if (renewals.get(key) === pending) renewals.delete(key);
    };
    pending.then(landed, landed);
    return pending;
  };
  const ms = (value: number, fallback: number): number =>
    Math.max(1, Math.ceil(Number.isFinite(value) && value > 0 ? value : fallback));

  const { ordering, watermarkKey } = createRedisOrdering({ client, prefix });
  // What a claim that found the id held answers: done, or another delivery's.
  const taken = (previous: unknown): ClaimResult =>
    String(previous) === DONE ? { status: 'done' } : { status: 'in_progress' };

  return {
    async claim(id, lease, orderingKey) {
      // The client cannot connect (it said why): the claim fails now, with why and the fix, rather than waiting in
      // the client's offline queue for its next try, which comes later and later (its retryStrategy) until it
      // outlasts storeTimeoutMs and every delivery waits that long to be logged as a bare outage.
      const { failure } = connection;
      if (failure !== undefined && client.status !== 'ready') throw explained(failure);
      const token = crypto.randomUUID();
      // NX with GET (Redis 7.0+): sets when absent and returns nil, else returns what is there, atomically.
      const claimed = client.call('SET', prefix + id, token, 'NX', 'PX', ms(lease, leaseMs), 'GET');
      // Ordering on: the key's watermark is read in the same round trip (both written in one turn), and on a
      // Cluster too (the two keys need not share a slot).
      if (orderingKey === undefined) {
        let previous: unknown;
        try {
          previous = await claimed;
        } catch (error) {
          throw explained(error);
        }
        return previous === null ? { status: 'claimed', token } : taken(previous);
      }
      // Awaited together: a Redis that fails both leaves no rejection unhandled (which would stop the process).
      let previous: unknown;
      let mark: unknown;
      try {
        [previous, mark] = await Promise.all([claimed, client.call('GET', watermarkKey(orderingKey))]);
      } catch (error) {
        // The SET may have claimed the id while the watermark read failed (a WRONGTYPE, or on a Cluster its master
        // down): the claim rejects, so nobody would hold its token, and the sender's retries would get 409 for a
        // whole lease. It is given up before the claim rejects (a release that fails too leaves it to its lease).
        if ((await claimed.catch(() => undefined)) === null)
          await run(scripts.release, prefix + id, [token]).catch(() => {});
        throw explained(error);
      }
      if (previous !== null) return taken(previous);
      return { status: 'claimed', token, watermark: mark === null ? undefined : String(mark) };
    },
    renew: (id, token, lease) => renew(prefix + id, [token, ms(lease, leaseMs)]),
    complete: (id, token, ttl) => run(scripts.complete, prefix + id, [token, ms(ttl, doneTtlMs)]),
    async release(id, token) {
      const key = prefix + id;
      const renewal = renewals.get(key);
      const released = await run(scripts.release, key, [token]);
      if (renewal === undefined) return released;
      // A renewal re-sent behind this release took the id back once it landed: given up again then.
      if (!(await renewal.catch(() => false))) return released;
      return (await run(scripts.release, key, [token])) || released;
    },
    ordering,
  };
}
