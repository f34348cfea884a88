// The Redis store on a real 3-master Redis Cluster: the store contract, a claim with an ordering key whose two keys
// live in different slots, a record key with braces, and a receiver end to end.
import { setTimeout as sleep } from 'node:timers/promises';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReceiver, type DedupeStore, type OrderingStore } from 'workforce-webhooks';
import { createRedisStore } from 'workforce-webhooks/redis';
import { createSignedDelivery, sampleEventData } from 'workforce-webhooks/testing';
import { runStoreContract } from '../contract/store-suite.js';
import { uniqueName } from '../setup/redis-helpers.js';
import { hasRedisCluster, type RedisCluster, startRedisCluster } from '../support/redis-cluster.js';

const secret = 'whsec_redis_cluster_test';

describe.skipIf(!hasRedisCluster())('createRedisStore on a Redis Cluster', () => {
  let redis: RedisCluster | undefined;
  let cluster!: Cluster;

  beforeAll(async () => {
    redis = await startRedisCluster();
    cluster = new Cluster([...redis.nodes], {
      enableOfflineQueue: false,
      redisOptions: { maxRetriesPerRequest: 1 },
    });
    // Errors reach the commands' rejections; an 'error' event without a listener would stop the process.
    cluster.on('error', () => {});
    await new Promise<void>((resolve, reject) => {
      cluster.once('ready', () => resolve());
      cluster.once('end', () => reject(new Error('the Cluster client could not connect')));
    });
  });

  afterAll(async () => {
    await cluster?.quit().catch(() => cluster.disconnect());
    await redis?.stop();
  });

  runStoreContract('redis cluster', async () => ({
    store: createRedisStore({ client: cluster, prefix: `${uniqueName('cluster')}:` }),
    // Redis keeps its own time: let it pass for real (milliseconds, with a margin for PX precision).
    elapse: (ms) => sleep(ms + 20),
  }));

  const ordering = (store: DedupeStore): OrderingStore => {
    if (store.ordering === undefined) throw new Error('the store has no ordering');
    return store.ordering;
  };

  /** The master that serves `key`'s slot, as `host:port`. */
  const masterOf = async (key: string): Promise<{ slot: number; master: string | undefined }> => {
    const slot = Number(await cluster.call('CLUSTER', 'KEYSLOT', key));
    return { slot, master: cluster.slots[slot]?.[0] };
  };

  it('claims with an ordering key whose watermark lives on another master than the id', async () => {
    const prefix = `${uniqueName('cluster-ordered')}:`;
    const store = createRedisStore({ client: cluster, prefix });
    const keys = ordering(store);
    // An id and an ordering key on different masters, so the claim's two keys are in different slots (one script
    // over both would fail with CROSSSLOT). The watermark key is `<prefix>mark:{<key>}`: its slot is the key's.
    const orderingKey = crypto.randomUUID();
    const watermarkAt = await masterOf(`${prefix}mark:{${orderingKey}}`);
    expect(watermarkAt.slot).toBe((await masterOf(orderingKey)).slot);
    const elsewhere = async (): Promise<string> => {
      for (;;) {
        const candidate = crypto.randomUUID();
        const at = await masterOf(prefix + candidate);
        if (at.master !== undefined && at.master !== watermarkAt.master) return candidate;
      }
    };
    const id = await elsewhere();
    const other = await elsewhere();
    expect(watermarkAt.master).toBeDefined();
    expect((await masterOf(prefix + id)).slot).not.toBe(watermarkAt.slot);

    const first = await store.claim(id, 30_000, orderingKey);
    expect(first).toEqual({ status: 'claimed', token: expect.any(String), watermark: undefined });
    if (first.status !== 'claimed') throw new Error('expected a claim');

    const mark = '000001700000000000000 x 2024-01-01T00:00:00Z';
    expect((await keys.enter(orderingKey, id, 30_000)).status).toBe('entered');
    expect(await keys.leave(orderingKey, id, mark, 60_000)).toBe(true);
    expect(await keys.watermark(orderingKey)).toBe(mark);

    expect(await store.claim(other, 30_000, orderingKey)).toEqual({
      status: 'claimed',
      token: expect.any(String),
      watermark: mark,
    });
    expect(await store.claim(id, 30_000, orderingKey)).toEqual({ status: 'in_progress' });
    expect(await store.complete(id, first.token, 60_000)).toBe(true);
    expect(await store.claim(id, 30_000, orderingKey)).toEqual({ status: 'done' });
  });

  // A record key that starts with `}` would make `{}` its keys' first braces: an empty hash tag, each whole key
  // hashed, the lease and the watermark in different slots, and every ordering script failing with CROSSSLOT.
  it('takes, renews, holds and gives up a record key that starts with a closing brace', async () => {
    const keys = ordering(createRedisStore({ client: cluster, prefix: `${uniqueName('cluster-braces')}:` }));
    const key = `}${crypto.randomUUID()}`;
    expect((await keys.enter(key, 'event', 30_000, 'run-1')).status).toBe('entered');
    expect(await keys.renew?.(key, 'event', 'run-1', 30_000)).toBe(true);
    expect(await keys.hold(key, 'event', 30_000, 'run-1')).toBe(true);
    expect(await keys.leave(key, 'event', undefined, 60_000)).toBe(true);
  });

  it('runs a receiver with ordering on the Cluster store: 202, one run, a duplicate answered 200', async () => {
    const store = createRedisStore({ client: cluster });
    const receiver = createReceiver({
      secret,
      store,
      ordering: { key: (event) => event.data.leaveRequestId as string | undefined },
    });
    let runs = 0;
    receiver.on('leave.approved', () => {
      runs++;
    });
    const leaveRequestId = crypto.randomUUID();
    const delivery = await createSignedDelivery({
      secret,
      type: 'leave.approved',
      data: { ...sampleEventData('leave.approved'), leaveRequestId },
    });
    const input = () => ({
      method: 'POST',
      headers: delivery.headers,
      body: new TextEncoder().encode(delivery.body),
    });
    try {
      expect((await receiver.handle(input())).status).toBe(202);
      await expect.poll(() => runs).toBe(1);
      // Handled: the id is marked done and the key's watermark set (the ordering scripts ran on the Cluster).
      await expect.poll(() => cluster.get(`wfwh:${delivery.event.id}`)).toBe('done');
      await expect.poll(() => ordering(store).watermark(leaveRequestId)).toBeDefined();

      const duplicate = await receiver.handle(input());
      expect(duplicate.status).toBe(200);
      expect(JSON.parse(duplicate.body)).toEqual({ received: true, duplicate: true });
      await sleep(50);
      expect(runs).toBe(1);
    } finally {
      await receiver.close();
    }
  });
});
