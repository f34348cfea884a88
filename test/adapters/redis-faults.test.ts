// The Redis store when Redis half fails: an ordered claim whose watermark read fails, a script cache lost between a
// renewal and a release, a Cluster whose masters go away, and the Cluster clients the store refuses.
import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigurationError, createReceiver, silentLogger } from 'workforce-webhooks';
import { createRedisStore } from 'workforce-webhooks/redis';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { createClaims } from '../../src/claims.js';
import { DEFAULT_DONE_TTL_MS } from '../../src/store.js';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';
import {
  hasRedisCluster,
  REDIS_CLI_BINARY,
  type RedisCluster,
  startRedisCluster,
} from '../support/redis-cluster.js';

const run = promisify(execFile);
const bodyOf = (text: string): Uint8Array => new TextEncoder().encode(text);
const claimed = (claim: { status: string; token?: string }): string => {
  if (claim.status !== 'claimed' || claim.token === undefined)
    throw new Error(`expected a claim, got ${claim.status}`);
  return claim.token;
};
// What a call did within `ms` (a wide bound on a hang): answered, failed, or still waiting.
const within = <T>(promise: Promise<T>, ms: number): Promise<{ outcome: string; error?: unknown }> =>
  Promise.race([
    promise.then(
      () => ({ outcome: 'answered' }),
      (error: unknown) => ({ outcome: 'failed', error }),
    ),
    sleep(ms).then(() => ({ outcome: 'still waiting' })),
  ]);

describe.skipIf(!redisUrl)('Redis store: an ordered claim whose watermark read fails', () => {
  it('leaves no claim behind when the watermark read of an ordered claim fails', async () => {
    const client = connectRedis();
    const prefix = `${uniqueName('partial')}:`;
    const store = createRedisStore({ client, prefix });
    const record = 'lr-partial';
    // The watermark read fails (here: the key is of another type; on a Cluster: its master is down).
    await client.hset(`${prefix}mark:{${record}}`, 'x', '1');
    const id = crypto.randomUUID();
    await expect(store.claim(id, 30_000, record)).rejects.toThrow(/WRONGTYPE/);
    // Nobody has the failed claim's token: the id must be free.
    expect(await client.exists(`${prefix}${id}`)).toBe(0);
    expect((await store.claim(id, 30_000)).status).toBe('claimed');
  });

  it('answers 503 and then takes the sender retry, instead of 409 for a whole lease', async () => {
    const secret = 'whsec_partial_claim';
    const client = connectRedis();
    const prefix = `${uniqueName('partial-rx')}:`;
    const store = createRedisStore({ client, prefix });
    const receiver = createReceiver({
      secret,
      store,
      logger: silentLogger,
      ordering: { key: () => 'lr-partial-rx' },
    });
    let runs = 0;
    receiver.on('leave.approved', () => {
      runs += 1;
    });
    // The watermark read fails once (another client had the key as a hash), then the key is repaired.
    await client.hset(`${prefix}mark:{lr-partial-rx}`, 'x', '1');
    const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
    const first = await receiver.handle({
      method: 'POST',
      headers: delivery.headers,
      body: bodyOf(delivery.body),
    });
    expect(first.status).toBe(503);
    await client.del(`${prefix}mark:{lr-partial-rx}`);
    const retry = await receiver.handle({
      method: 'POST',
      headers: delivery.headers,
      body: bodyOf(delivery.body),
    });
    expect(retry.status).toBe(202);
    await receiver.close();
    expect(runs).toBe(1);
  });
});

describe.skipIf(!redisUrl)('Redis store: a renewal in flight when its claim is released', () => {
  it('never lets a renewal sent before a release take the released id back after Redis lost its scripts', async () => {
    const client = connectRedis();
    const prefix = `${uniqueName('reorder')}:`;
    const store = createRedisStore({ client, prefix });
    const claims = createClaims({
      store,
      logger: silentLogger,
      leaseMs: 30_000,
      doneTtlMs: DEFAULT_DONE_TTL_MS,
      timeoutMs: 5000,
    });
    const id = crypto.randomUUID();
    const token = claimed(await claims.claim(id, undefined));
    // Redis restarted or failed over: its script cache is empty; then one release (any event's) reloads that script,
    // and the renewal's script is the only one still missing.
    await client.script('FLUSH');
    const other = crypto.randomUUID();
    expect(await store.release(other, claimed(await store.claim(other, 30_000)))).toBe(true);
    // The owner's renewal is in flight when its handler fails and the claim is released (500: the sender retries).
    const stop = claims.keep(id, token, () => {}, true);
    stop();
    await claims.release(id, token);
    // Released is released, whatever the renewal in flight: the sender's retry takes the id.
    expect(await client.exists(`${prefix}${id}`)).toBe(0);
    expect((await store.claim(id, 30_000)).status).toBe('claimed');
  });
});

describe('Redis store: the Cluster clients it refuses', () => {
  const nodes = [{ host: '127.0.0.1', port: 1 }];

  it('refuses a Cluster client whose own offline queue would hold claims while the Cluster is down, with the fix', () => {
    // The README's node settings do not reach the Cluster's own queue: enableOfflineQueue is the Cluster's.
    const waiting = new Cluster(nodes, { lazyConnect: true, redisOptions: { maxRetriesPerRequest: 1 } });
    expect(() => createRedisStore({ client: waiting })).toThrow(ConfigurationError);
    expect(() => createRedisStore({ client: waiting })).toThrow(/enableOfflineQueue: false/);
    waiting.disconnect();
  });

  it('accepts a Cluster client without an offline queue', () => {
    const failing = new Cluster(nodes, {
      lazyConnect: true,
      enableOfflineQueue: false,
      redisOptions: { maxRetriesPerRequest: 1 },
    });
    expect(() => createRedisStore({ client: failing })).not.toThrow();
    failing.disconnect();
  });

  it('refuses a Cluster client with clusterRetryStrategy null, which never reconnects, as it refuses a standalone one', () => {
    // Ended once every node is gone: every delivery after it would be answered 503 until a restart.
    for (const options of [
      { lazyConnect: true, clusterRetryStrategy: null },
      { lazyConnect: true, clusterRetryStrategy: null, enableOfflineQueue: false },
    ]) {
      const ending = new Cluster(nodes, options);
      expect(() => createRedisStore({ client: ending })).toThrow(ConfigurationError);
      expect(() => createRedisStore({ client: ending })).toThrow(/clusterRetryStrategy: \(times\) =>/);
      ending.disconnect();
    }
  });
});

describe.skipIf(!hasRedisCluster())('Redis store on a Cluster whose masters go away', () => {
  let redis: RedisCluster | undefined;
  let cluster!: Cluster;

  beforeAll(async () => {
    redis = await startRedisCluster();
    // The Cluster client the README advises for the store.
    cluster = new Cluster([...redis.nodes], {
      enableOfflineQueue: false,
      redisOptions: { maxRetriesPerRequest: 1 },
    });
    cluster.on('error', () => {});
    await new Promise<void>((resolve, reject) => {
      cluster.once('ready', () => resolve());
      cluster.once('end', () => reject(new Error('the Cluster client could not connect')));
    });
  });

  afterAll(async () => {
    cluster?.disconnect();
    await redis?.stop();
  });

  const masterOf = async (key: string): Promise<string> => {
    const slot = Number(await cluster.call('CLUSTER', 'KEYSLOT', key));
    return cluster.slots[slot]![0]!;
  };

  it('leaves no claim behind when the master of the watermark is down and the claim fails', {
    timeout: 60_000,
  }, async () => {
    const prefix = `${uniqueName('cluster-down')}:`;
    const store = createRedisStore({ client: cluster, prefix });
    const id = crypto.randomUUID();
    const idMaster = await masterOf(`${prefix}${id}`);
    let record = '';
    for (let i = 0; ; i++) {
      record = `lr-${i}`;
      if ((await masterOf(`${prefix}mark:{${record}}`)) !== idMaster) break;
    }
    const [host, port] = (await masterOf(`${prefix}mark:{${record}}`)).split(':');
    await run(REDIS_CLI_BINARY, ['-h', host!, '-p', port!, 'SHUTDOWN', 'NOSAVE']).catch(() => {});
    await expect(store.claim(id, 30_000, record)).rejects.toThrow();
    // The claim failed (the delivery is answered 503): it must not hold the id on the master that is still up.
    const [idHost, idPort] = idMaster.split(':');
    const direct = new Redis({ host: idHost, port: Number(idPort), maxRetriesPerRequest: 1 });
    direct.on('error', () => {});
    try {
      expect(await direct.exists(`${prefix}${id}`)).toBe(0);
    } finally {
      direct.disconnect();
    }
  });

  it('fails a claim at once while the whole Cluster is down, with the advised client', {
    timeout: 30_000,
  }, async () => {
    await redis?.stop();
    const store = createRedisStore({ client: cluster, prefix: `${uniqueName('cluster-gone')}:` });
    // A wide bound: "at once" is well under the receiver's storeTimeoutMs; waiting is a hang.
    expect((await within(store.claim(crypto.randomUUID(), 30_000), 5000)).outcome).toBe('failed');
  });
});
