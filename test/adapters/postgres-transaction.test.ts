// Transactional handlers on a real PostgreSQL: the handlers' writes and the event's done mark commit together, or not at all.
import { setTimeout as sleep } from 'node:timers/promises';
import type { PoolClient } from 'pg';
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  ConfigurationError,
  createMemoryQueue,
  createMemoryStore,
  createReceiver,
  type Receiver,
  type ReceiverOptions,
} from 'workforce-webhooks';
import { createPostgresStore, type PostgresStore } from 'workforce-webhooks/postgres';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { connectPostgres, postgresUrl, uniqueTable } from '../setup/postgres-helpers.js';
import { recordingLogger } from '../support/logger.js';

const secret = 'whsec_postgres_transaction_test';

async function setup(options: Partial<ReceiverOptions> = {}) {
  const pool = connectPostgres();
  const table = uniqueTable('events');
  const app = uniqueTable('app');
  const store = createPostgresStore({ pool, table, cleanupIntervalMs: 0 });
  await store.migrate();
  await pool.query(`CREATE TABLE ${app} (event_id text NOT NULL, handler text NOT NULL)`);
  const logger = recordingLogger();
  const receiver = createReceiver({ secret, store, logger, ...options });
  const rows = async (id?: string): Promise<number> => {
    const { rows } = await pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${app} ${id === undefined ? '' : 'WHERE event_id = $1'}`,
      id === undefined ? [] : [id],
    );
    return rows[0]!.n;
  };
  const mark = async (id: string) =>
    (await pool.query(`SELECT token IS NULL AS done, committed FROM ${table} WHERE id = $1`, [id])).rows[0];
  return { pool, table, app, store, receiver, logger, rows, mark };
}

async function post(receiver: Receiver, id?: string) {
  const delivery = await createSignedDelivery({ secret, type: 'leave.approved', ...(id ? { id } : {}) });
  const answer = await receiver.handle({
    method: 'POST',
    headers: delivery.headers,
    body: new TextEncoder().encode(delivery.body),
  });
  return { id: delivery.event.id, status: answer.status, answer };
}

describe.skipIf(!postgresUrl)('ctx.transaction() with the Postgres store', () => {
  it('commits the handler writes with the done mark (inline), and a redelivery is a duplicate', async () => {
    const { receiver, app, rows, mark } = await setup({ mode: 'inline' });
    receiver.on('leave.approved', async (event, ctx) => {
      const db = await ctx.transaction();
      // With workforce-webhooks/postgres imported, the transaction is typed as the pg client it is.
      expectTypeOf(db).toExtend<PoolClient>();
      expect(await ctx.transaction()).toBe(db); // one transaction per attempt
      await db.query(`INSERT INTO ${app} VALUES ($1, 'typed')`, [event.id]);
    });
    const first = await post(receiver);
    expect(first.status).toBe(200);
    expect(await rows(first.id)).toBe(1);
    expect(await mark(first.id)).toEqual({ done: true, committed: true });
    expect((await post(receiver, first.id)).status).toBe(200);
    expect(await rows(first.id)).toBe(1);
    await receiver.close();
  });

  it('rolls the attempt back when a handler fails after writing, and the retry writes once', async () => {
    const { receiver, app, rows, mark } = await setup({ mode: 'inline' });
    let failures = 1;
    receiver.on('leave.approved', async (event, ctx) => {
      const db = await ctx.transaction();
      await db.query(`INSERT INTO ${app} VALUES ($1, 'typed')`, [event.id]);
      if (failures-- > 0) throw new Error('after the insert');
    });
    const first = await post(receiver);
    expect(first.status).toBe(500);
    expect(await rows(first.id)).toBe(0);
    expect(await mark(first.id)).toBeUndefined(); // released: the sender's retry can take it
    expect((await post(receiver, first.id)).status).toBe(200);
    expect(await rows(first.id)).toBe(1);
    await receiver.close();
  });

  it("shares one transaction between an attempt's handlers: one failing undoes the others' writes", async () => {
    const queue = createMemoryQueue({ backoff: () => 10, attempts: 5 });
    const { receiver, app, rows, mark } = await setup({ queue });
    let failures = 2;
    receiver.on('leave.approved', async (event, ctx) => {
      await (await ctx.transaction()).query(`INSERT INTO ${app} VALUES ($1, 'typed')`, [event.id]);
    });
    receiver.onAny(async (event, ctx) => {
      const db = await ctx.transaction();
      await db.query(`INSERT INTO ${app} VALUES ($1, 'any')`, [event.id]);
      if (failures-- > 0) throw new Error('second handler fails');
    });
    const first = await post(receiver);
    expect(first.status).toBe(202);
    await expect.poll(() => mark(first.id), { timeout: 10_000 }).toEqual({ done: true, committed: true });
    expect(await rows(first.id)).toBe(2); // one per handler, from the third attempt only
    expect(failures).toBe(-1);
    await receiver.close();
  });

  it('rolls back an attempt that timed out, and its late writes fail instead of landing', async () => {
    const queue = createMemoryQueue({ backoff: () => 10, handlerTimeoutMs: 300 });
    const { receiver, app, rows, mark } = await setup({ queue });
    let late: Promise<unknown> | undefined;
    let calls = 0;
    receiver.on('leave.approved', async (event, ctx) => {
      const db = await ctx.transaction();
      await db.query(`INSERT INTO ${app} VALUES ($1, 'typed')`, [event.id]);
      if (++calls === 1) {
        // Ignores its signal, and writes again after the attempt has timed out.
        await sleep(800);
        late = db.query(`INSERT INTO ${app} VALUES ($1, 'late')`, [event.id]).then(
          () => 'written',
          () => 'refused',
        );
      }
    });
    const first = await post(receiver);
    expect(first.status).toBe(202);
    await expect.poll(() => mark(first.id), { timeout: 10_000 }).toEqual({ done: true, committed: true });
    await expect.poll(() => late, { timeout: 5000 }).toBeDefined();
    expect(await late).toBe('refused');
    expect(await rows(first.id)).toBe(1);
    expect(calls).toBe(2);
    await receiver.close();
  });

  it('skips the writes of an attempt that comes after a commit (a crash before the queue heard of it)', async () => {
    const { receiver, app, store, rows, logger } = await setup({ mode: 'inline' });
    const id = crypto.randomUUID();
    // An earlier attempt committed, and its process died before marking the job finished.
    const earlier = await (store as PostgresStore).begin(id);
    if (earlier === 'committed') throw new Error('expected a transaction');
    await earlier.client.query(`INSERT INTO ${app} VALUES ($1, 'typed')`, [id]);
    expect(await earlier.commit()).toBe(true);
    let ran = 0;
    receiver.on('leave.approved', async (event, ctx) => {
      ran++;
      const db = await ctx.transaction();
      await db.query(`INSERT INTO ${app} VALUES ($1, 'typed')`, [event.id]);
    });
    // The event's row is done already: the delivery is a duplicate. A queue's retry of the job meets the same mark:
    expect((await post(receiver, id)).status).toBe(200);
    const again = await (store as PostgresStore).begin(id);
    expect(again).toBe('committed');
    expect(await rows(id)).toBe(1);
    expect(ran).toBe(0);
    expect(logger.lines.filter((line) => line.level === 'warn' || line.level === 'error')).toEqual([]);
    await receiver.close();
  });

  it('a second attempt running beside the first waits its turn, then finds the event committed', async () => {
    const { store, app, rows } = await setup();
    const pg = store as PostgresStore;
    const id = crypto.randomUUID();
    const first = await pg.begin(id);
    if (first === 'committed') throw new Error('expected a transaction');
    await first.client.query(`INSERT INTO ${app} VALUES ($1, 'a')`, [id]);
    const second = pg.begin(id);
    await sleep(200);
    expect(await first.commit()).toBe(true);
    expect(await second).toBe('committed');
    expect(await rows(id)).toBe(1);
  });

  it('gives the pool its client back when an attempt times out waiting for the event, and other deliveries go on', async () => {
    const table = uniqueTable('lockwait');
    // Another instance's attempt at the same event, stuck inside its transaction (its process paused, say).
    const other = createPostgresStore({ pool: connectPostgres(), table, cleanupIntervalMs: 0 });
    await other.migrate();
    const pool = connectPostgres(postgresUrl, { max: 3 });
    const store = createPostgresStore({ pool, table, timeoutMs: 300, cleanupIntervalMs: 0 });
    const queue = createMemoryQueue({ attempts: 5, backoff: () => 10, handlerTimeoutMs: 200 });
    const receiver = createReceiver({ secret, store, queue, logger: recordingLogger(), storeTimeoutMs: 500 });
    let attempts = 0;
    receiver.on('leave.approved', async (_event, ctx) => {
      attempts++;
      await (await ctx.transaction()).query('SELECT 1');
    });
    const id = crypto.randomUUID();
    const held = await other.begin(id);
    if (held === 'committed') throw new Error('expected a transaction');
    try {
      expect((await post(receiver, id)).status).toBe(202);
      // Five attempts of 200 ms, 10 ms apart, each waiting for the event; each wait lasts at most 300 ms.
      await expect.poll(() => attempts, { timeout: 10_000 }).toBe(5);
      await sleep(800);
      expect({ busy: pool.totalCount - pool.idleCount, next: (await post(receiver)).status }).toEqual({
        busy: 0,
        next: 202,
      });
    } finally {
      await held.rollback(false);
      await receiver.close({ timeoutMs: 2000 });
    }
  });

  it("begin() waits for the event timeoutMs at a time while the attempt's signal lasts, and gives up once it aborts", async () => {
    const pool = connectPostgres();
    const table = uniqueTable('turns');
    const store = createPostgresStore({ pool, table, timeoutMs: 300, cleanupIntervalMs: 0 });
    await store.migrate();
    const id = crypto.randomUUID();
    const first = await store.begin(id);
    if (first === 'committed') throw new Error('expected a transaction');
    const outcome = (opening: Promise<unknown>) =>
      opening.then(
        (tx) => (tx === 'committed' ? 'committed' : 'opened'),
        (error: unknown) => `rejected: ${(error as Error).message}`,
      );
    try {
      // No attempt to wait for: one wait, then the call fails like any other past its deadline.
      let started = performance.now();
      expect(await outcome(store.begin(id))).toMatch(/^rejected: workforce-webhooks: another attempt/);
      expect(performance.now() - started).toBeLessThan(1000);
      // An attempt that ended before asking takes no connection.
      const connects = pool.totalCount;
      expect(await outcome(store.begin(id, AbortSignal.abort(new Error('ended'))))).toBe('rejected: ended');
      expect(pool.totalCount).toBe(connects);
      // An attempt that ends while waiting: rejected with its reason within timeoutMs, its client back in the pool.
      const attempt = new AbortController();
      const waiting = outcome(store.begin(id, attempt.signal));
      await sleep(400); // past one wait: it waits again
      attempt.abort(new Error('timed out'));
      started = performance.now();
      expect(await waiting).toBe('rejected: timed out');
      expect(performance.now() - started).toBeLessThan(600);
      expect(pool.idleCount).toBe(pool.totalCount - 1); // the first attempt's
      // An attempt that lasts gets its turn, however many waits that takes.
      const lasting = outcome(store.begin(id, new AbortController().signal));
      await sleep(800);
      expect(await first.commit()).toBe(true);
      expect(await lasting).toBe('committed');
    } finally {
      await first.rollback(false);
    }
  });

  it("gives the handlers the session's own lock_timeout, not the bound on the wait for the event", async () => {
    const pool = connectPostgres(postgresUrl, { options: '-c lock_timeout=7000' });
    const store = createPostgresStore({
      pool,
      table: uniqueTable('setting'),
      timeoutMs: 300,
      cleanupIntervalMs: 0,
    });
    await store.migrate();
    const tx = await store.begin(crypto.randomUUID());
    if (tx === 'committed') throw new Error('expected a transaction');
    try {
      expect((await tx.client.query('SHOW lock_timeout')).rows).toEqual([{ lock_timeout: '7s' }]);
    } finally {
      await tx.rollback(false);
    }
  });

  it('answers 200 inline, with no lost lease, when a renewal lands just after the commit', async () => {
    // A renewal every 50 ms while handlers run.
    const { receiver, table, app, rows, logger } = await setup({ mode: 'inline', leaseMs: 150 });
    const other = connectPostgres();
    receiver.on('leave.approved', async (event, ctx) => {
      const db = await ctx.transaction();
      await db.query(`INSERT INTO ${app} VALUES ($1, 'typed')`, [event.id]);
      // Another session holds the event's row briefly (a dashboard's SELECT ... FOR UPDATE): the done mark and
      // the renewals queue behind it, and go on in that order once it lets go.
      const holder = await other.connect();
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM ${table} WHERE id = $1 FOR UPDATE`, [event.id]);
      setTimeout(() => void holder.query('COMMIT').finally(() => holder.release()), 200);
    });
    const statuses: number[] = [];
    for (let i = 0; i < 25; i++) statuses.push((await post(receiver)).status);
    const errors = logger.lines.filter((line) => line.level === 'error').map((line) => line.msg);
    expect({ statuses, errors, rows: await rows() }).toEqual({
      statuses: Array(25).fill(200),
      errors: [],
      rows: 25,
    });
    await receiver.close({ timeoutMs: 2000 });
  });

  it('rejects with a ConfigurationError on a store without transactions', async () => {
    const receiver = createReceiver({
      secret,
      store: createMemoryStore(),
      mode: 'inline',
      logger: recordingLogger(),
    });
    let seen: unknown;
    receiver.on('leave.approved', async (_event, ctx) => {
      seen = await ctx.transaction().catch((error: unknown) => error);
    });
    expect((await post(receiver)).status).toBe(200);
    expect(seen).toBeInstanceOf(ConfigurationError);
    expect(String((seen as Error).message)).toContain('createPostgresStore');
  });

  it('leaves handlers that never ask for it as they were: no transaction, no connection held', async () => {
    const { receiver, pool, mark } = await setup({ mode: 'inline' });
    receiver.on('leave.approved', () => {});
    const first = await post(receiver);
    expect(first.status).toBe(200);
    expect(await mark(first.id)).toEqual({ done: true, committed: false });
    expect(pool.idleCount).toBe(pool.totalCount);
  });
});
