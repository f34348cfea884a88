// The Redis store on a real redis-server: one round trip per claim, TTLs, script-cache loss, shared claims, renewal.
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigurationError, createReceiver, type DedupeStore, silentLogger } from 'workforce-webhooks';
import { createRedisStore } from 'workforce-webhooks/redis';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';
import { hasRedisServer, type RedisServer, startRedisServer } from '../setup/redis-server.js';

const secret = 'whsec_redis_store_test';
const DAY = 24 * 60 * 60 * 1000;

describe.skipIf(!redisUrl)('createRedisStore', () => {
  it('claims in a single SET NX PX GET command and completes with one script call', async () => {
    const client = connectRedis();
    const prefix = `${uniqueName('monitor')}:`;
    const store = createRedisStore({ client, prefix });
    const monitor = await connectRedis().monitor();
    const seen: string[][] = [];
    // What the client sent; the commands a script runs inside Redis show up with source `lua`.
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      if (source !== 'lua' && args.some((arg) => arg.startsWith(prefix)))
        seen.push([args[0]!.toLowerCase(), ...args.slice(1)]);
    });
    // Warm up: the first script call on a server loads the script (EVALSHA, NOSCRIPT, EVAL).
    const warmId = crypto.randomUUID();
    const warm = await store.claim(warmId, 30_000);
    if (warm.status === 'claimed') await store.complete(warmId, warm.token, DAY);
    await expect.poll(() => seen.length).toBeGreaterThanOrEqual(2);
    await sleep(50);
    seen.length = 0;
    const id = crypto.randomUUID();
    const claim = await store.claim(id, 30_000);
    if (claim.status !== 'claimed') throw new Error('expected a claim');
    await expect.poll(() => seen.length).toBe(1);
    expect(seen[0]).toEqual(['set', `${prefix}${id}`, claim.token, 'NX', 'PX', '30000', 'GET']);
    await store.complete(id, claim.token, DAY);
    await expect.poll(() => seen.length).toBe(2);
    expect(seen[1]![0]).toBe('evalsha');
    monitor.disconnect();
  });

  it('stores a claim with its lease and a done id with its TTL, under the prefix', async () => {
    const client = connectRedis();
    const store = createRedisStore({ client });
    const id = crypto.randomUUID();
    const claim = await store.claim(id, 30_000);
    if (claim.status !== 'claimed') throw new Error('expected a claim');
    // Default prefix `wfwh:`.
    expect(await client.get(`wfwh:${id}`)).toBe(claim.token);
    const leaseLeft = await client.pttl(`wfwh:${id}`);
    expect(leaseLeft).toBeGreaterThan(0);
    expect(leaseLeft).toBeLessThanOrEqual(30_000);
    expect(await store.complete(id, claim.token, 3 * DAY)).toBe(true);
    expect(await client.get(`wfwh:${id}`)).toBe('done');
    expect(await client.pttl(`wfwh:${id}`)).toBeGreaterThan(2 * DAY);
  });

  it('reloads its scripts when Redis lost them (restart, failover)', async () => {
    const client = connectRedis();
    const store = createRedisStore({ client, prefix: `${uniqueName('noscript')}:` });
    const id = crypto.randomUUID();
    const claim = await store.claim(id, 30_000);
    if (claim.status !== 'claimed') throw new Error('expected a claim');
    await client.script('FLUSH');
    expect(await store.renew(id, claim.token, 30_000)).toBe(true);
    await client.script('FLUSH');
    expect(await store.complete(id, claim.token, DAY)).toBe(true);
    expect(await store.claim(id, 30_000)).toEqual({ status: 'done' });
  });

  it('shares claims between instances: two clients, two stores, one Redis', async () => {
    const prefix = `${uniqueName('shared')}:`;
    const a = createRedisStore({ client: connectRedis(), prefix });
    const b = createRedisStore({ client: connectRedis(), prefix });
    const id = crypto.randomUUID();
    const claims = await Promise.all([a.claim(id, 30_000), b.claim(id, 30_000)]);
    expect(claims.map((c) => c.status).sort()).toEqual(['claimed', 'in_progress']);
    const owner = claims[0]!.status === 'claimed' ? a : b;
    const claim = claims.find((c) => c.status === 'claimed');
    if (claim?.status !== 'claimed') throw new Error('expected a claim');
    const other = owner === a ? b : a;
    expect(await other.complete(id, 'not-the-token', DAY)).toBe(false);
    expect(await owner.complete(id, claim.token, DAY)).toBe(true);
    expect(await other.claim(id, 30_000)).toEqual({ status: 'done' });
  });

  it('refuses a client that would hold claims forever while Redis is down, and a missing client', () => {
    const waiting = new Redis(redisUrl, { maxRetriesPerRequest: null, lazyConnect: true });
    expect(() => createRedisStore({ client: waiting })).toThrow(ConfigurationError);
    expect(() => createRedisStore({ client: waiting })).toThrow(/duplicate\(\{ maxRetriesPerRequest: 1 \}\)/);
    // Either way out is accepted: no offline queue, or a command timeout.
    const timed = new Redis(redisUrl, {
      maxRetriesPerRequest: null,
      commandTimeout: 2000,
      lazyConnect: true,
    });
    expect(() => createRedisStore({ client: timed })).not.toThrow();
    expect(() => createRedisStore({} as never)).toThrow(/needs `client`/);
    waiting.disconnect();
    timed.disconnect();
  });

  it('never closes the client it was given', async () => {
    const client = connectRedis();
    const receiver = createReceiver({ secret, store: createRedisStore({ client }) });
    receiver.on('leave.approved', () => {});
    const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
    const body = new TextEncoder().encode(delivery.body);
    expect((await receiver.handle({ method: 'POST', headers: delivery.headers, body })).status).toBe(202);
    await receiver.close();
    expect(client.status).toBe('ready');
    expect(await client.ping()).toBe('PONG');
  });
});

describe.skipIf(!redisUrl)('a receiver on the Redis store, inline mode', () => {
  it('keeps the claim of a handler that runs past its lease; a duplicate meanwhile is not processed', async () => {
    const prefix = `${uniqueName('renewal')}:`;
    let runs = 0;
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    // Two instances sharing Redis; the lease (300 ms) is renewed every 100 ms while the handler runs.
    const make = () =>
      createReceiver({
        secret,
        mode: 'inline',
        leaseMs: 300,
        store: createRedisStore({ client: connectRedis(), prefix }),
      }).on('leave.approved', async () => {
        runs++;
        await released;
      });
    const [first, second] = [make(), make()];
    const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
    const input = {
      method: 'POST',
      headers: delivery.headers,
      body: new TextEncoder().encode(delivery.body),
    };
    const answer = first.handle(input);
    await expect.poll(() => runs).toBe(1);
    await sleep(900); // three leases: without renewal the claim would have lapsed
    const duplicate = await second.handle(input);
    expect(duplicate.status).toBe(409);
    expect(duplicate.headers['retry-after']).toBeDefined();
    release();
    expect((await answer).status).toBe(200);
    const after = await second.handle(input);
    expect(after.status).toBe(200);
    expect(JSON.parse(after.body)).toEqual({ received: true, duplicate: true });
    expect(runs).toBe(1);
    await Promise.all([first.close(), second.close()]);
  });
});

describe.skipIf(!redisUrl || !hasRedisServer())(
  'a receiver on the Redis store, Redis silent after the 202',
  () => {
    // A server of the test's own, paused (SIGSTOP: alive, its connections open, silent) as the done mark is sent.
    let redis: RedisServer | undefined;
    afterEach(async () => {
      redis?.resume();
      await redis?.dispose();
      redis = undefined;
    });

    it('keeps a processed event a duplicate when the pause outlasts the claim lease', {
      timeout: 30_000,
    }, async () => {
      const server = await startRedisServer();
      redis = server;
      const redisStore = createRedisStore({ client: connectRedis(server.url) });
      let pauseNext = true;
      // The real store; only the moment of the SIGSTOP is chosen: just as the done mark is sent.
      const store: DedupeStore = {
        ...redisStore,
        complete(id, token, ttlMs) {
          if (pauseNext) {
            pauseNext = false;
            server.pause();
          }
          return redisStore.complete(id, token, ttlMs);
        },
      };
      const runs: string[] = [];
      const receiver = createReceiver({
        secret,
        store,
        leaseMs: 1000,
        storeTimeoutMs: 500,
        logger: silentLogger,
      }).on('leave.approved', (event) => void runs.push(event.id));
      const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
      const input = {
        method: 'POST',
        headers: delivery.headers,
        body: new TextEncoder().encode(delivery.body),
      };
      expect((await receiver.handle(input)).status).toBe(202);
      await expect.poll(() => runs).toHaveLength(1);
      await sleep(2000); // past the 1 s lease: the claim key is gone when Redis answers again
      server.resume();
      // The done mark held in the socket lands; the service's repeat of the event (spec rule 3) is a duplicate.
      await expect.poll(() => connectRedis(server.url).get(`wfwh:${delivery.event.id}`)).toBe('done');
      expect((await receiver.handle(input)).status).toBe(200);
      expect(runs).toHaveLength(1);
      await receiver.close({ timeoutMs: 1000 });
    });
  },
);
