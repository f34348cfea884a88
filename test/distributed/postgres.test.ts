// Receiver processes on one PostgreSQL and no Redis: every handler once, and kill -9 never loses or doubles an app row.
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createPostgresStore } from 'workforce-webhooks/postgres';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { connectPostgres, postgresUrl, uniqueTable } from '../setup/postgres-helpers.js';
import {
  deliverCopies,
  deliverUntilAccepted,
  expectOneAcceptedCopy,
  type Instance,
  pool,
  startInstance,
} from './cluster.js';

const SCRIPT = fileURLToPath(new URL('./postgres-instance.ts', import.meta.url));
const secret = 'whsec_postgres_instances';
const EVENTS = 1000;
const running: Instance[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((instance) => instance.stop('SIGKILL')));
});

// This run's tables: the store's, the app's (written through ctx.transaction), and two plain logs.
async function prepare(label: string) {
  const run = uniqueTable(label);
  const db = connectPostgres();
  await createPostgresStore({ pool: db, table: `${run}_events`, cleanupIntervalMs: 0 }).migrate();
  for (const table of ['app', 'runs', 'starts'])
    await db.query(`CREATE TABLE ${run}_${table} (event_id text NOT NULL, instance text NOT NULL)`);
  const env = { POSTGRES_URL: postgresUrl, RUN_NAME: run, SECRET: secret };
  const count = async (table: string, distinct = false): Promise<number> => {
    const what = distinct ? 'DISTINCT event_id' : '*';
    const { rows } = await db.query<{ n: number }>(`SELECT count(${what})::int AS n FROM ${run}_${table}`);
    return rows[0]!.n;
  };
  const perEvent = async (table: string): Promise<Map<string, number>> => {
    const { rows } = await db.query<{ id: string; n: number }>(
      `SELECT event_id AS id, count(*)::int AS n FROM ${run}_${table} GROUP BY event_id`,
    );
    return new Map(rows.map(({ id, n }) => [id, n]));
  };
  return { run, db, env, count, perEvent };
}

const deliver = (ids: readonly string[], next: () => string) =>
  pool(
    ids.map((id) => async () => {
      const delivery = await createSignedDelivery({ secret, type: 'leave.approved', id });
      return deliverUntilAccepted(delivery, next);
    }),
    48,
  );

describe.skipIf(!postgresUrl)(
  'receiver processes on one PostgreSQL (Postgres store, BullMQ on Postgres)',
  () => {
    it('runs every handler once per event, each delivered three times at once to three instances', {
      timeout: 240_000,
    }, async () => {
      const { env, count, perEvent } = await prepare('three');
      const instances = await Promise.all(
        ['a', 'b', 'c'].map((instance) => startInstance({ ...env, INSTANCE: instance }, SCRIPT)),
      );
      running.push(...instances);
      const ids = Array.from({ length: EVENTS }, () => crypto.randomUUID());
      expectOneAcceptedCopy(await deliverCopies(ids, instances, { secret, limit: 48 }), ids);

      await expect.poll(() => count('app'), { timeout: 120_000, interval: 200 }).toBe(EVENTS);
      await expect.poll(() => count('runs'), { timeout: 60_000, interval: 200 }).toBe(EVENTS);
      await Promise.all(running.splice(0).map((instance) => instance.stop('SIGTERM')));
      for (const table of ['app', 'runs']) {
        const runs = await perEvent(table);
        expect([...runs.keys()].sort()).toEqual([...ids].sort());
        expect([...runs.values()].filter((n) => n !== 1)).toEqual([]);
      }
    });

    for (const moment of [
      'in the middle of its handlers',
      'between a handler insert and its commit',
    ] as const) {
      it(`keeps exactly one app row per accepted event when an instance is killed ${moment}`, {
        timeout: 240_000,
      }, async () => {
        const between = moment.startsWith('between');
        const { env, count, perEvent } = await prepare(between ? 'kill_commit' : 'kill_middle');
        const timing: Record<string, string> = {
          LOCK_MS: '1000',
          STALLED_MS: '500',
          ...(between ? { PAUSE_AFTER_INSERT_MS: '300' } : { HANDLER_MS: '30' }),
        };
        const a = await startInstance({ ...env, ...timing, INSTANCE: 'a' }, SCRIPT);
        running.push(a);
        // Every event is accepted by `a` before anything else runs: 1 000 jobs held in Postgres.
        const ids = Array.from({ length: EVENTS }, () => crypto.randomUUID());
        const answers = await deliver(ids, () => a.url);
        expect(answers.map((each) => each.at(-1))).toEqual(Array(EVENTS).fill(202));

        if (between) {
          // The handler says when it has inserted, and waits before returning: kill it right there.
          await new Promise<void>((resolve) => {
            const seen = (chunk: Buffer): void => {
              if (!chunk.toString().includes('inserted ')) return;
              a.process.stdout?.off('data', seen);
              resolve();
            };
            a.process.stdout?.on('data', seen);
          });
        } else {
          await expect.poll(() => count('app'), { timeout: 60_000, interval: 5 }).toBeGreaterThanOrEqual(100);
        }
        await a.stop('SIGKILL');
        const cutAt = await count('app');
        expect(cutAt).toBeLessThan(EVENTS);

        // Another instance takes the jobs over from Postgres.
        const b = await startInstance({ ...env, LOCK_MS: '1000', STALLED_MS: '500', INSTANCE: 'b' }, SCRIPT);
        running.push(b);
        await expect.poll(() => count('app'), { timeout: 120_000, interval: 200 }).toBe(EVENTS);
        await b.stop('SIGTERM');
        const rows = await perEvent('app');
        expect([...rows.keys()].sort()).toEqual([...ids].sort());
        expect([...rows.values()].filter((n) => n !== 1)).toEqual([]);
        expect(await count('app')).toBe(EVENTS);
        // Nothing lost for the handler outside the transaction either: it ran for every accepted event.
        await expect.poll(() => count('runs', true), { timeout: 60_000, interval: 200 }).toBe(EVENTS);
        expect([...(await perEvent('runs')).keys()].sort()).toEqual([...ids].sort());
        // The kill really cut handlers short: some started on `a` and were committed by `b`.
        const starts = await perEvent('starts');
        expect([...starts.values()].some((n) => n > 1)).toBe(true);
      });
    }
  },
);
