// Behaviours of the Postgres store on a real PostgreSQL: hostile and mixed-case names, search_path, concurrent
// migrations, killed and stopped connections, a full pool, a read-only server, the ordering watermark.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { ConfigurationError, createMemoryQueue, createReceiver, type Receiver } from 'workforce-webhooks';
import { createPostgresStore } from 'workforce-webhooks/postgres';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { markOf } from '../../src/ordering-mark.js';
import { connectPostgres, postgresUrl, uniqueTable } from '../setup/postgres-helpers.js';
import { startPostgresServer } from '../setup/postgres-server.js';
import { recordingLogger } from '../support/logger.js';

const secret = 'whsec_postgres_pins_test';
const DAY = 86_400_000;

async function post(receiver: Receiver, id?: string) {
  const delivery = await createSignedDelivery({ secret, type: 'leave.approved', ...(id ? { id } : {}) });
  const answer = await receiver.handle({
    method: 'POST',
    headers: delivery.headers,
    body: new TextEncoder().encode(delivery.body),
  });
  return { id: delivery.event.id, status: answer.status };
}

// How a call ended, for a plain comparison: what it resolved with, or why it rejected.
const settle = (promise: Promise<unknown>): Promise<string> =>
  promise.then(
    (value) => (typeof value === 'string' ? value : 'ok'),
    (error: Error) => `failed: ${error.message}`,
  );

describe.skipIf(!postgresUrl)('the Postgres store: names, spellings and migrations', () => {
  it('refuses table names with quotes, SQL, spaces, empty parts, non-ASCII letters, a newline or over 63 characters', () => {
    const pool = connectPostgres();
    for (const table of [
      'a"b',
      "a'b",
      'events; DROP TABLE x; --',
      'a b',
      'a.b.c',
      '.events',
      'events.',
      '1events',
      `e${'x'.repeat(63)}`,
      'évents',
      'events\n',
    ])
      expect(() => createPostgresStore({ pool, table, cleanupIntervalMs: 0 }), table).toThrow(
        ConfigurationError,
      );
  });

  it('keeps an uppercase schema and table as spelled, with their ordering table, and commits an event there', async () => {
    const pool = connectPostgres();
    const schema = `Sch_${crypto.randomUUID().slice(0, 8)}`;
    await pool.query(`CREATE SCHEMA "${schema}"`);
    const upper = createPostgresStore({ pool, table: `${schema}.Events`, cleanupIntervalMs: 0 });
    await upper.migrate();
    await upper.migrate();
    const id = crypto.randomUUID();
    const claim = await upper.claim(id, 30_000, 'key-1');
    if (claim.status !== 'claimed') throw new Error('expected a claim');
    const tx = await upper.begin(id);
    if (tx === 'committed') throw new Error('expected a transaction');
    expect(await tx.commit()).toBe(true);
    expect(await upper.claim(id, 30_000)).toEqual({ status: 'done' });
    const { rows } = await pool.query(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1`,
      [schema],
    );
    expect(rows.map((row) => row.table_name)).toEqual(['Events', 'Events_ordering']);
  });

  it('makes two spellings of one table (through search_path, and schema-qualified) take turns on an event, the second finding the commit', async () => {
    const schema = `sp_${crypto.randomUUID().slice(0, 8)}`;
    const admin = connectPostgres();
    await admin.query(`CREATE SCHEMA ${schema}`);
    const pathPool = connectPostgres(postgresUrl, { options: `-c search_path=${schema},public` });
    const name = uniqueTable('sp');
    const bare = createPostgresStore({ pool: pathPool, table: name, timeoutMs: 3000, cleanupIntervalMs: 0 });
    await bare.migrate();
    expect(
      (await admin.query('SELECT to_regclass($1) AS t', [`${schema}.${name}`])).rows[0].t,
    ).not.toBeNull();
    const qualified = createPostgresStore({
      pool: admin,
      table: `${schema}.${name}`,
      timeoutMs: 3000,
      cleanupIntervalMs: 0,
    });
    const id = crypto.randomUUID();
    const first = await bare.begin(id, new AbortController().signal);
    if (first === 'committed') throw new Error('expected a transaction');
    const second = qualified.begin(id, new AbortController().signal);
    await sleep(200);
    expect(await first.commit()).toBe(true);
    expect(await second).toBe('committed');
  });

  it('resolves ten migrate() calls at once, spelled with and without the schema', async () => {
    const pool = connectPostgres(postgresUrl, { max: 12 });
    const name = uniqueTable('many');
    const outcomes = await Promise.all(
      Array.from({ length: 10 }, (_, index) =>
        settle(
          createPostgresStore({
            pool,
            table: index % 2 === 0 ? name : `public.${name}`,
            timeoutMs: 10_000,
            cleanupIntervalMs: 0,
          }).migrate(),
        ),
      ),
    );
    expect(outcomes).toEqual(Array(10).fill('ok'));
  });
});

describe.skipIf(!postgresUrl)('the Postgres store: lost connections, a full pool, a read-only server', () => {
  it('retries once and writes once a transactional handler whose connection is killed mid-attempt', async () => {
    const pool = connectPostgres();
    const admin = connectPostgres();
    const table = uniqueTable('kill');
    const app = uniqueTable('kill_app');
    const store = createPostgresStore({ pool, table, cleanupIntervalMs: 0 });
    await store.migrate();
    await pool.query(`CREATE TABLE ${app} (event_id text NOT NULL)`);
    const receiver = createReceiver({
      secret,
      store,
      logger: recordingLogger(),
      queue: createMemoryQueue({ backoff: () => 20, attempts: 5 }),
    });
    let calls = 0;
    receiver.on('leave.approved', async (event, ctx) => {
      const db = await ctx.transaction();
      await db.query(`INSERT INTO ${app} VALUES ($1)`, [event.id]);
      if (++calls === 1) {
        const { rows } = await db.query('SELECT pg_backend_pid() AS pid');
        await admin.query('SELECT pg_terminate_backend($1)', [rows[0].pid]);
        await sleep(50);
      }
    });
    const first = await post(receiver);
    expect(first.status).toBe(202);
    await expect
      .poll(
        async () => (await pool.query(`SELECT committed FROM ${table} WHERE id = $1`, [first.id])).rows[0],
        {
          timeout: 10_000,
        },
      )
      .toEqual({ committed: true });
    const { rows } = await pool.query(`SELECT count(*)::int AS n FROM ${app}`);
    expect({ rows: rows[0].n, calls }).toEqual({ rows: 1, calls: 2 });
    await receiver.close();
  });

  it('fails claim() and begin() in time on a pool the app used up, and serves again once it is freed', async () => {
    const pool = connectPostgres(postgresUrl, { max: 2 });
    const store = createPostgresStore({
      pool,
      table: uniqueTable('full'),
      timeoutMs: 300,
      cleanupIntervalMs: 0,
    });
    await store.migrate();
    const held = [await pool.connect(), await pool.connect()];
    const id = crypto.randomUUID();
    const started = performance.now();
    const outcomes = await Promise.all([settle(store.claim(id, 30_000)), settle(store.begin(id))]);
    expect(outcomes).toEqual([
      expect.stringMatching(/^failed: .*no answer within 300 ms/),
      expect.stringMatching(/^failed: .*no answer within 300 ms/),
    ]);
    expect(performance.now() - started).toBeLessThan(10_000);
    for (const client of held) client.release();
    // The claim that timed out was still queued on the pool: it may land and hold the id for its lease.
    await sleep(100);
    const again = await store.claim(id, 30_000);
    expect(['claimed', 'in_progress']).toContain(again.status);
    expect(pool.totalCount).toBeLessThanOrEqual(2);
  });

  it('answers a delivery 503 and runs nothing on a read-only server (default_transaction_read_only)', async () => {
    const table = uniqueTable('ro');
    const writable = createPostgresStore({ pool: connectPostgres(), table, cleanupIntervalMs: 0 });
    await writable.migrate();
    const pool = connectPostgres(postgresUrl, { options: '-c default_transaction_read_only=on' });
    const store = createPostgresStore({ pool, table, cleanupIntervalMs: 0 });
    const receiver = createReceiver({ secret, store, logger: recordingLogger(), mode: 'inline' });
    let calls = 0;
    receiver.on('leave.approved', () => {
      calls += 1;
    });
    expect((await post(receiver)).status).toBe(503);
    expect(calls).toBe(0);
    await expect(store.migrate()).rejects.toThrow(/read-only/);
    await receiver.close();
  });

  it('gives its connection back and leaves no wait on the server when an attempt is shut down waiting for its turn', async () => {
    const pool = connectPostgres(postgresUrl, { max: 4 });
    const table = uniqueTable('wait');
    const store = createPostgresStore({ pool, table, timeoutMs: 300, cleanupIntervalMs: 0 });
    await store.migrate();
    const id = crypto.randomUUID();
    const first = await store.begin(id, new AbortController().signal);
    if (first === 'committed') throw new Error('expected a transaction');
    const controller = new AbortController();
    const waiting = settle(store.begin(id, controller.signal));
    await sleep(700); // a few rounds of lock_timeout
    controller.abort(new Error('shut down'));
    expect(await waiting).toBe('failed: shut down');
    const admin = connectPostgres();
    // This table's waits only: other files' tests share the server.
    const waits = async () =>
      (
        await admin.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity
           WHERE wait_event_type = 'Lock' AND wait_event = 'advisory' AND query LIKE '%' || $1 || '%'`,
          [table],
        )
      ).rows[0].n;
    await expect.poll(waits, { timeout: 5000 }).toBe(0);
    expect(pool.totalCount - pool.idleCount).toBe(1); // only the first attempt's transaction
    expect(await first.commit()).toBe(true);
  });
});

describe.skipIf(!postgresUrl)(
  'the Postgres store on a server stopped mid-transaction (SIGSTOP, then SIGCONT)',
  () => {
    it('fails the commit in time on a server stopped mid-transaction, and the retry writes once after it answers again', async () => {
      const postgres = await startPostgresServer();
      try {
        const pool = connectPostgres(postgres.url);
        const table = uniqueTable('stop');
        const app = uniqueTable('stop_app');
        const store = createPostgresStore({ pool, table, timeoutMs: 300, cleanupIntervalMs: 0 });
        await store.migrate();
        await pool.query(`CREATE TABLE ${app} (event_id text NOT NULL)`);
        const logger = recordingLogger();
        const receiver = createReceiver({
          secret,
          store,
          logger,
          queue: createMemoryQueue({ backoff: () => 500, attempts: 10 }),
        });
        let calls = 0;
        receiver.on('leave.approved', async (event, ctx) => {
          const db = await ctx.transaction();
          await db.query(`INSERT INTO ${app} VALUES ($1)`, [event.id]);
          if (++calls === 1) {
            await postgres.pause();
            setTimeout(() => void postgres.resume(), 1500);
          }
        });
        const first = await post(receiver);
        expect(first.status).toBe(202);
        const check = connectPostgres(postgres.url);
        await expect
          .poll(
            async () =>
              (
                await check
                  .query(`SELECT committed FROM ${table} WHERE id = $1`, [first.id])
                  .catch(() => ({ rows: [] }))
              ).rows[0],
            { timeout: 20_000, interval: 200 },
          )
          .toEqual({ committed: true });
        const { rows } = await check.query(`SELECT count(*)::int AS n FROM ${app}`);
        expect(rows[0].n).toBe(1);
        expect(calls).toBeGreaterThanOrEqual(2);
        await receiver.close();
      } finally {
        await postgres.resume().catch(() => {});
        await postgres.dispose();
      }
    }, 60_000);
  },
);

describe.skipIf(!postgresUrl)('the Postgres ordering watermark', () => {
  it('moves the watermark by instants (offsets, nanoseconds), ties broken by event id, never back', async () => {
    const pool = connectPostgres();
    const store = createPostgresStore({ pool, table: uniqueTable('marks'), cleanupIntervalMs: 0 });
    await store.migrate();
    const key = `leave-${crypto.randomUUID()}`;
    const mark = (id: string, occurredAt: string) => markOf({ id, occurredAt })!;
    const leave = async (m: string) => {
      const entered = await store.ordering!.enter(key, 'owner', 30_000, crypto.randomUUID());
      expect((await entered).status).toBe('entered');
      await store.ordering!.leave(key, 'owner', m, DAY);
    };
    // 08:00:00.5Z written with a +02:00 offset; the Z one is 100 ms older although it sorts after as text.
    const newest = mark('b', '2026-03-01T10:00:00.5+02:00');
    await leave(newest);
    await leave(mark('z', '2026-03-01T08:00:00.4Z'));
    expect(await store.ordering!.watermark(key)).toBe(newest);
    // Nanoseconds: .123456789 after .123456788.
    const nanos = mark('a', '2026-03-01T08:00:01.123456789Z');
    await leave(mark('a', '2026-03-01T08:00:01.123456788Z'));
    await leave(nanos);
    await leave(mark('a', '2026-03-01T08:00:01.123456788Z'));
    expect(await store.ordering!.watermark(key)).toBe(nanos);
    // A tie on the instant: the greater event id wins, whatever the order of arrival.
    const tieHigh = mark('e2', '2026-03-01T08:00:02Z');
    await leave(tieHigh);
    await leave(mark('e1', '2026-03-01T06:00:02-02:00'));
    expect(await store.ordering!.watermark(key)).toBe(tieHigh);
  });
});
