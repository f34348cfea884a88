// Spec rule 4 across three instances on the other shared backends: the Postgres store with BullMQ on Postgres, and the
// Redis store with each instance's memory queue. Newest state, one run per record at a time, never older over newer.
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createPostgresStore } from 'workforce-webhooks/postgres';
import { connectPostgres, postgresUrl, uniqueTable } from '../setup/postgres-helpers.js';
import { connectRedis, redisUrl } from '../setup/redis-helpers.js';
import {
  checkOrdering,
  deliverShuffled,
  leaveLifecycles,
  type RunRecord,
} from '../support/ordering-scenario.js';
import { type Instance, startInstance } from './cluster.js';

const SCRIPT = fileURLToPath(new URL('./ordering-instance.ts', import.meta.url));
const secret = 'whsec_ordering_every_backend';
const running: Instance[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((instance) => instance.stop('SIGKILL')));
});

/** Delivers 100 lifecycles 1 000 times, shuffled, to the instances; checks every record once all settled. */
async function deliverAndCheck(name: string, instances: readonly Instance[]): Promise<void> {
  const events = leaveLifecycles(100);
  await deliverShuffled(
    events,
    instances.map((instance) => instance.url),
    secret,
  );
  const redis = connectRedis();
  const read = async () => {
    const runs = (await redis.lrange(`${name}:runs`, 0, -1)).map(
      (line) => JSON.parse(line) as RunRecord & { readonly instance: string },
    );
    const stale = new Map(
      Object.entries(await redis.hgetall(`${name}:stale`)).map(([id, n]) => [id, Number(n)] as const),
    );
    return { runs, stale };
  };
  await expect
    .poll(
      async () => {
        const { runs, stale } = await read();
        return runs.filter((r) => r.kind === 'end').length + [...stale.values()].reduce((a, b) => a + b, 0);
      },
      { timeout: 120_000, interval: 200 },
    )
    .toBeGreaterThanOrEqual(events.length);
  // Stop gracefully, so nothing late comes after the count.
  await Promise.all(running.splice(0).map((instance) => instance.stop('SIGTERM')));
  const { runs, stale } = await read();
  // Never older over newer on every record, not only in its final state (no handler here fails).
  checkOrdering(events, runs, stale, new Map(Object.entries(await redis.hgetall(`${name}:state`))));
  expect([...stale.values()].reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
  expect(new Set(runs.map((r) => r.instance)).size).toBeGreaterThan(1);
}

describe.skipIf(!redisUrl || !postgresUrl)(
  'ordering across instances (Postgres store, BullMQ on Postgres)',
  () => {
    it('100 leave requests, 1 000 deliveries shuffled and duplicated to 3 instances: newest state, one run per key at a time, never older over newer', {
      timeout: 240_000,
    }, async () => {
      const name = uniqueTable('ordering');
      const db = connectPostgres();
      await createPostgresStore({ pool: db, table: `${name}_events`, cleanupIntervalMs: 0 }).migrate();
      const env = {
        REDIS_URL: redisUrl,
        POSTGRES_URL: postgresUrl,
        STORE: 'postgres',
        DEFAULT_LOCKS: '1',
        RUN_NAME: name,
        SECRET: secret,
      };
      const instances = await Promise.all(
        ['a', 'b', 'c'].map((i) => startInstance({ ...env, INSTANCE: i }, SCRIPT)),
      );
      running.push(...instances);
      await deliverAndCheck(name, instances);
      // The records' watermarks were kept in Postgres, one row per record.
      const { rows } = await db.query(`SELECT count(*)::int AS n FROM ${name}_events_ordering`);
      expect(rows[0].n).toBe(100);
    });
  },
);

describe.skipIf(!redisUrl)('ordering across instances (Redis store, memory queues)', () => {
  it('100 leave requests, 1 000 deliveries shuffled and duplicated to 3 instances: newest state, one run per key at a time, never older over newer', {
    timeout: 240_000,
  }, async () => {
    const name = uniqueTable('ordering');
    const env = { REDIS_URL: redisUrl, QUEUE: 'memory', DEFAULT_LOCKS: '1', RUN_NAME: name, SECRET: secret };
    const instances = await Promise.all(
      ['a', 'b', 'c'].map((i) => startInstance({ ...env, INSTANCE: i }, SCRIPT)),
    );
    running.push(...instances);
    await deliverAndCheck(name, instances);
  });
});
