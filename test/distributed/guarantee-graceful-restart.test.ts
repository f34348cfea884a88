// A rolling deploy with the BullMQ queue, on Redis and on Postgres: the instance stopped gracefully (receiver.close())
// with a backlog leaves its waiting jobs stored, and the next instance runs them; every accepted event processed once.
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createPostgresStore } from 'workforce-webhooks/postgres';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { connectPostgres, postgresUrl, uniqueTable } from '../setup/postgres-helpers.js';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';
import {
  checkOrdering,
  deliverShuffled,
  leaveLifecycles,
  type RunRecord,
} from '../support/ordering-scenario.js';
import { type Answers, deliverUntilAccepted, type Instance, pool, startInstance } from './cluster.js';

const POSTGRES_SCRIPT = fileURLToPath(new URL('./postgres-instance.ts', import.meta.url));
const ORDERING_SCRIPT = fileURLToPath(new URL('./ordering-instance.ts', import.meta.url));

const secret = 'whsec_graceful_restart';
const EVENTS = 300;
const running: Instance[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((instance) => instance.stop('SIGKILL')));
});

// Each event once to `instance`, retried like the sender until accepted.
const deliverAll = (ids: readonly string[], instance: Instance): Promise<Answers[]> =>
  pool(
    ids.map((id) => async () => {
      const delivery = await createSignedDelivery({ secret, type: 'leave.approved', id });
      return deliverUntilAccepted(delivery, () => instance.url);
    }),
    32,
  );

describe.skipIf(!redisUrl)('a graceful restart with a backlog (Redis store, BullMQ queue)', () => {
  it('leaves the waiting jobs in Redis for the next instance, which runs them: each event once', {
    timeout: 120_000,
  }, async () => {
    const name = uniqueName('graceful-restart');
    // The package's default locks: nothing is killed here, and a loaded machine must not lose a lock.
    const env = { REDIS_URL: redisUrl, RUN_NAME: name, SECRET: secret, QUEUE: 'bullmq', DEFAULT_LOCKS: '1' };
    // Handlers far slower than deliveries arrive (10 at a time, a second each), so most jobs still wait in Redis.
    const a = await startInstance({ ...env, INSTANCE: 'a', HANDLER_MS: '1000' });
    running.push(a);
    const ids = Array.from({ length: EVENTS }, () => crypto.randomUUID());
    const answers = await deliverAll(ids, a);
    expect(answers.map((each) => each.at(-1))).toEqual(Array(EVENTS).fill(202));

    const redis = connectRedis();
    const doneBy = async (instance: string) => Number(await redis.hget(`${name}:done-by`, instance));
    // SIGTERM: stop taking deliveries and jobs, let the running handlers finish, exit 0.
    await a.stop('SIGTERM');
    expect(a.process.exitCode).toBe(0);
    const doneOnA = await doneBy('a');
    expect(doneOnA).toBeLessThan(EVENTS);

    const b = await startInstance({ ...env, INSTANCE: 'b', HANDLER_MS: '0' });
    running.push(b);
    await expect
      .poll(() => redis.hlen(`${name}:runs:typed`), { timeout: 60_000, interval: 100 })
      .toBe(EVENTS);
    await expect.poll(() => redis.hlen(`${name}:runs:any`), { timeout: 60_000, interval: 100 }).toBe(EVENTS);
    await b.stop('SIGTERM');
    expect(await doneBy('b')).toBe(EVENTS - doneOnA);
    for (const handler of ['typed', 'any']) {
      const runs = await redis.hgetall(`${name}:runs:${handler}`);
      expect(Object.keys(runs).sort()).toEqual([...ids].sort());
      expect(Object.values(runs).filter((count) => count !== '1')).toEqual([]);
    }
    // Nothing `a` started was left unfinished by its graceful stop.
    const log = await redis.lrange(`${name}:log`, 0, -1);
    const startedOnA = log.filter((line) => line.startsWith('start:a:')).length;
    expect(startedOnA).toBe(doneOnA);
  });
});

describe.skipIf(!postgresUrl)(
  'a graceful restart with a backlog (Postgres store, BullMQ on Postgres)',
  () => {
    it('leaves the waiting jobs in Postgres for the next instance, which runs them: each event once', {
      timeout: 180_000,
    }, async () => {
      const run = uniqueTable('graceful');
      const db = connectPostgres();
      await createPostgresStore({ pool: db, table: `${run}_events`, cleanupIntervalMs: 0 }).migrate();
      for (const table of ['app', 'runs', 'starts'])
        await db.query(`CREATE TABLE ${run}_${table} (event_id text NOT NULL, instance text NOT NULL)`);
      const perEvent = async (table: string, instance?: string): Promise<Map<string, number>> => {
        const { rows } = await db.query<{ id: string; n: number }>(
          `SELECT event_id AS id, count(*)::int AS n FROM ${run}_${table} WHERE $1::text IS NULL OR instance = $1
         GROUP BY event_id`,
          [instance ?? null],
        );
        return new Map(rows.map(({ id, n }) => [id, n]));
      };
      const env = { POSTGRES_URL: postgresUrl, RUN_NAME: run, SECRET: secret };
      // Handlers far slower than deliveries arrive, so most jobs still wait in Postgres.
      const a = await startInstance({ ...env, INSTANCE: 'a', HANDLER_MS: '1000' }, POSTGRES_SCRIPT);
      running.push(a);
      const ids = Array.from({ length: EVENTS }, () => crypto.randomUUID());
      expect((await deliverAll(ids, a)).map((each) => each.at(-1))).toEqual(Array(EVENTS).fill(202));

      await a.stop('SIGTERM');
      expect(a.process.exitCode).toBe(0);
      const doneOnA = (await perEvent('app', 'a')).size;
      expect(doneOnA).toBeLessThan(EVENTS);
      // Nothing `a` started was left unfinished by its graceful stop.
      expect((await perEvent('starts', 'a')).size).toBe(doneOnA);

      const b = await startInstance({ ...env, INSTANCE: 'b' }, POSTGRES_SCRIPT);
      running.push(b);
      await expect
        .poll(async () => (await perEvent('app')).size, { timeout: 120_000, interval: 200 })
        .toBe(EVENTS);
      await expect
        .poll(async () => (await perEvent('runs')).size, { timeout: 60_000, interval: 200 })
        .toBe(EVENTS);
      await b.stop('SIGTERM');
      expect((await perEvent('app', 'b')).size).toBe(EVENTS - doneOnA);
      for (const table of ['app', 'runs']) {
        const rows = await perEvent(table);
        expect([...rows.keys()].sort()).toEqual([...ids].sort());
        expect([...rows.values()].filter((n) => n !== 1)).toEqual([]);
      }
    });
  },
);

describe.skipIf(!redisUrl)(
  'a graceful restart with a backlog, ordering on (Redis store, BullMQ queue)',
  () => {
    it('hands every waiting event to the next instance: newest state, one run per key at a time, each event run or counted stale once', {
      timeout: 240_000,
    }, async () => {
      const name = uniqueName('graceful-ordering');
      const env = { REDIS_URL: redisUrl, RUN_NAME: name, SECRET: secret, DEFAULT_LOCKS: '1' };
      // Handlers far slower than deliveries arrive, so many events wait, for a worker slot or for their record's key.
      const a = await startInstance({ ...env, INSTANCE: 'a', HANDLER_MS: '300' }, ORDERING_SCRIPT);
      running.push(a);
      const events = leaveLifecycles(100);
      await deliverShuffled(events, [a.url], secret, 600);
      const redis = connectRedis();
      const ended = async (): Promise<number> =>
        (await redis.lrange(`${name}:runs`, 0, -1)).filter((line) => line.includes('"kind":"end"')).length;
      await a.stop('SIGTERM');
      expect(a.process.exitCode).toBe(0);
      const stale = async () =>
        new Map(
          Object.entries(await redis.hgetall(`${name}:stale`)).map(([id, n]) => [id, Number(n)] as const),
        );
      const settled = async (): Promise<number> =>
        (await ended()) + [...(await stale()).values()].reduce((x, y) => x + y, 0);
      expect(await settled()).toBeLessThan(events.length);

      const b = await startInstance({ ...env, INSTANCE: 'b', HANDLER_MS: '0' }, ORDERING_SCRIPT);
      running.push(b);
      await expect.poll(settled, { timeout: 120_000, interval: 200 }).toBeGreaterThanOrEqual(events.length);
      await b.stop('SIGTERM');
      const runs = (await redis.lrange(`${name}:runs`, 0, -1)).map(
        (line) => JSON.parse(line) as RunRecord & { readonly instance: string },
      );
      checkOrdering(
        events,
        runs,
        await stale(),
        new Map(Object.entries(await redis.hgetall(`${name}:state`))),
      );
      // Both ran some: `a` until its graceful stop, `b` what `a` left waiting.
      expect(new Set(runs.map((run) => run.instance))).toEqual(new Set(['a', 'b']));
    });
  },
);
