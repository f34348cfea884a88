// Redis store prefixes with odd characters (spaces, quotes, unicode, braces): they work, on one Redis and on a
// Redis Cluster, or the store refuses them when made, with the fix.
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigurationError, type DedupeStore } from 'workforce-webhooks';
import { createRedisStore } from 'workforce-webhooks/redis';
import { markOf } from '../../src/ordering-mark.js';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';
import { hasRedisCluster, type RedisCluster, startRedisCluster } from '../support/redis-cluster.js';

const DAY = 24 * 60 * 60 * 1000;

// A claim, an ordered key taken and given up with a watermark, and the watermark read back by a claim.
const orders = async (store: DedupeStore): Promise<void> => {
  const keys = store.ordering!;
  const record = `record ${crypto.randomUUID()}`;
  const event = crypto.randomUUID();
  const claim = await store.claim(event, 30_000, record);
  expect(claim).toEqual({ status: 'claimed', token: expect.any(String), watermark: undefined });
  expect((await keys.enter(record, event, 30_000, 'run-1')).status).toBe('entered');
  const mark = markOf({ id: event, occurredAt: '2026-11-24T10:00:00.5Z' })!;
  expect(await keys.leave(record, event, mark, DAY, 'run-1')).toBe(true);
  if (claim.status === 'claimed') expect(await store.complete(event, claim.token, DAY)).toBe(true);
  expect(await store.claim(crypto.randomUUID(), 30_000, record)).toEqual({
    status: 'claimed',
    token: expect.any(String),
    watermark: mark,
  });
  expect((await store.claim(event, 30_000)).status).toBe('done');
};

const odd = (base: string): readonly string[] => [
  `${base} with spaces:`,
  `${base}"quoted" 'too':`,
  `${base}:ünïcødé:日本:`,
  `{${base}}:`,
  `${base}}:`,
];

describe.skipIf(!redisUrl)('Redis store prefixes on one Redis', () => {
  it('works with spaces, quotes, unicode and braces in the prefix', async () => {
    const client = connectRedis();
    for (const prefix of [...odd(uniqueName('prefix')), `${uniqueName('prefix')}{:`])
      await orders(createRedisStore({ client, prefix }));
  });
});

describe.skipIf(!hasRedisCluster())('Redis store prefixes on a Redis Cluster', () => {
  let redis: RedisCluster | undefined;
  let cluster!: Cluster;

  beforeAll(async () => {
    redis = await startRedisCluster();
    cluster = new Cluster([...redis.nodes], {
      enableOfflineQueue: false,
      redisOptions: { maxRetriesPerRequest: 1 },
    });
    cluster.on('error', () => {});
    await new Promise<void>((resolve, reject) => {
      cluster.once('ready', () => resolve());
      cluster.once('end', () => reject(new Error('the Cluster client could not connect')));
    });
  }, 120_000);

  afterAll(async () => {
    await cluster?.quit().catch(() => cluster.disconnect());
    await redis?.stop();
  });

  it('works with spaces, quotes, unicode and a closed hash tag in the prefix', async () => {
    for (const prefix of odd(uniqueName('cluster-prefix')))
      await orders(createRedisStore({ client: cluster, prefix }));
  });

  it("refuses, when made, a prefix whose open brace would split a record's lease and watermark across slots", async () => {
    for (const prefix of ['wfwh{', 'wf{}wh:', 'wf}{wh:', '{}:{wfwh}:']) {
      let refused: unknown;
      let store: DedupeStore | undefined;
      try {
        store = createRedisStore({ client: cluster, prefix });
      } catch (error) {
        refused = error;
      }
      // Taken, it would have to order events: it cannot (CROSSSLOT), so it must be refused instead.
      if (store !== undefined) await orders(store);
      expect(refused, prefix).toBeInstanceOf(ConfigurationError);
      expect((refused as Error).message).toMatch(/CROSSSLOT.*'\{wfwh\}:'.*'wfwh:'/);
    }
  });
});
