// The Postgres store's calls on a row another transaction holds: each fails in time and leaves no statement waiting
// on the server, for the dedupe table's renew, complete and release and the ordering table's enter, hold, leave, renew.
import { describe, expect, it } from 'vitest';
import type { OrderingStore } from 'workforce-webhooks';
import { createPostgresStore, type PostgresStore } from 'workforce-webhooks/postgres';
import { connectPostgres, postgresUrl, uniqueTable } from '../setup/postgres-helpers.js';

// A call's own deadline; the server's lock_timeout is the same.
const timeoutMs = 300;
const mark = '000001700000000000000 a 2023-11-14T22:13:20Z';

/** A store call on a row (`prepare` makes the row and gives the call), and what it answers once the row is free. */
interface Case {
  readonly name: string;
  readonly row: 'dedupe' | 'ordering';
  readonly prepare: (
    store: PostgresStore,
    key: string,
  ) => Promise<(store: PostgresStore) => Promise<unknown>>;
  readonly answer: unknown;
}

const ordering = (store: PostgresStore): OrderingStore => {
  if (store.ordering === undefined) throw new Error('the Postgres store has no ordering');
  return store.ordering;
};

// A claim's token, for the dedupe calls that need it.
async function claimed(store: PostgresStore, id: string): Promise<string> {
  const claim = await store.claim(id, 30_000);
  if (claim.status !== 'claimed') throw new Error(`expected a claim, got ${claim.status}`);
  return claim.token;
}

// An ordering key entered by owner `a`'s run `r`.
async function entered(store: PostgresStore, key: string): Promise<void> {
  expect((await ordering(store).enter(key, 'a', 30_000, 'r')).status).toBe('entered');
}

const cases: readonly Case[] = [
  {
    name: 'a renewal of a claim',
    row: 'dedupe',
    prepare: async (store, id) => {
      const token = await claimed(store, id);
      return (s) => s.renew(id, token, 30_000);
    },
    answer: true,
  },
  {
    name: 'a done mark',
    row: 'dedupe',
    prepare: async (store, id) => {
      const token = await claimed(store, id);
      return (s) => s.complete(id, token, 60_000);
    },
    answer: true,
  },
  {
    name: 'a release of a claim',
    row: 'dedupe',
    prepare: async (store, id) => {
      const token = await claimed(store, id);
      return (s) => s.release(id, token);
    },
    answer: true,
  },
  {
    name: 'an entry to an ordering key',
    row: 'ordering',
    prepare: async (store, key) => {
      await entered(store, key);
      return async (s) => (await ordering(s).enter(key, 'a', 30_000, 'r')).status;
    },
    answer: 'entered',
  },
  {
    name: 'a hold of an ordering key',
    row: 'ordering',
    prepare: async (store, key) => {
      await entered(store, key);
      return async (s) => ordering(s).hold(key, 'a', 30_000, 'r');
    },
    answer: true,
  },
  {
    name: 'a leave of an ordering key',
    row: 'ordering',
    prepare: async (store, key) => {
      await entered(store, key);
      return async (s) => ordering(s).leave(key, 'a', mark, 60_000, 'r');
    },
    answer: true,
  },
  {
    name: 'a renewal of an ordering lease',
    row: 'ordering',
    prepare: async (store, key) => {
      await entered(store, key);
      return async (s) => ordering(s).renew(key, 'a', 'r', 30_000);
    },
    answer: true,
  },
];

// Statements on `table` waiting on the server for a lock.
async function waiting(admin: ReturnType<typeof connectPostgres>, table: string): Promise<number> {
  const { rows } = await admin.query(
    `SELECT count(*)::int AS n FROM pg_stat_activity
     WHERE wait_event_type = 'Lock' AND query LIKE '%' || $1 || '%' AND pid <> pg_backend_pid()`,
    [table],
  );
  return rows[0].n;
}

describe.skipIf(!postgresUrl)('store calls given up on while a row is locked', () => {
  it.each(cases.map((c) => [c.name, c] as const))(
    'answers in time %s on a row another transaction holds, and leaves no statement waiting on the server',
    async (_, { row, prepare, answer }) => {
      const pool = connectPostgres(postgresUrl, { max: 10 });
      const admin = connectPostgres();
      const table = uniqueTable('bound');
      const store = createPostgresStore({ pool, table, timeoutMs, cleanupIntervalMs: 0 });
      await store.migrate();
      const key = crypto.randomUUID();
      const call = await prepare(store, key);
      const [name, column] = row === 'dedupe' ? [table, 'id'] : [`${table}_ordering`, 'record_key'];
      // A transaction holds the row and stops answering (an app transaction on it, a process frozen before its
      // COMMIT): Postgres keeps it until TCP keepalives give up.
      const holder = await admin.connect();
      try {
        await holder.query('BEGIN');
        await holder.query(`SELECT 1 FROM "${name}" WHERE ${column} = $1 FOR UPDATE`, [key]);
        // The caller tries three times; each call fails by its deadline (or the server's, the same).
        for (let retry = 0; retry < 3; retry++)
          await expect(call(store)).rejects.toThrow(/no answer within 300 ms|lock timeout/);
        await expect.poll(() => waiting(admin, table), { timeout: 5000 }).toBe(0);
      } finally {
        await holder.query('ROLLBACK').catch(() => {});
        holder.release();
      }
      // Once the row is free, the same call does its work.
      expect(await call(store)).toBe(answer);
    },
  );
});
