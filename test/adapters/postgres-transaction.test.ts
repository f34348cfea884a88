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
