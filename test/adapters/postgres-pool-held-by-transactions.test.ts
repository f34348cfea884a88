// A pg pool whose every connection is held by running handlers' transactions: the store's calls that wait for one
// fail in time, and the store says once why (not a Postgres outage) and how to size the pool; a large enough pool
// says nothing.
import { describe, expect, it } from 'vitest';
import { createReceiver, type Receiver, silentLogger } from 'workforce-webhooks';
import { createPostgresStore } from 'workforce-webhooks/postgres';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { connectPostgres, postgresUrl, uniqueTable } from '../setup/postgres-helpers.js';
import { recordingLogger } from '../support/logger.js';

const secret = 'whsec_postgres_pool_held_by_transactions';

async function post(receiver: Receiver): Promise<number> {
  const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
  const answer = await receiver.handle({
    method: 'POST',
    headers: delivery.headers,
    body: new TextEncoder().encode(delivery.body),
  });
  return answer.status;
}

// An inline receiver on a pool of `max` connections whose handlers write through ctx.transaction() and then wait
// for `release()`: each holds its connection till then.
async function setup(max: number) {
  // connectionTimeoutMillis past the store's deadline: the store's own deadline is what a waiting call meets.
  const pool = connectPostgres(postgresUrl, { max, connectionTimeoutMillis: 30_000 });
  const app = uniqueTable('app');
  const logger = recordingLogger();
  const store = createPostgresStore({
    pool,
    table: uniqueTable('held'),
    timeoutMs: 500,
    cleanupIntervalMs: 0,
    logger,
  });
  await store.migrate();
  await pool.query(`CREATE TABLE ${app} (event_id text NOT NULL)`);
  const receiver = createReceiver({ secret, store, mode: 'inline', leaseMs: 900, logger: silentLogger });
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let holding = 0;
  receiver.on('leave.approved', async (event, ctx) => {
    const db = await ctx.transaction();
    await db.query(`INSERT INTO ${app} VALUES ($1)`, [event.id]);
    holding++;
    await released;
  });
  const writes = async (): Promise<number> =>
    (await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${app}`)).rows[0]!.n;
  return { receiver, store, logger, release, holding: () => holding, writes };
}

const heldWarnings = (logger: ReturnType<typeof recordingLogger>) =>
  logger.lines.filter((line) => line.level === 'warn' && line.msg?.includes('is held by a running handler'));

describe.skipIf(!postgresUrl)('a pg pool held by the handlers’ transactions', () => {
  it('says once, with the fix, that the transactions hold every connection, and every delivery is answered', {
    timeout: 120_000,
  }, async () => {
    const { receiver, store, logger, release, holding } = await setup(2);
    const answers = Promise.all([post(receiver), post(receiver)]);
    await expect.poll(holding, { timeout: 30_000 }).toBe(2);
    // Another delivery's claim, and the running events' lease renewals, find no connection.
    expect(await post(receiver)).toBe(503);
    await expect.poll(() => heldWarnings(logger).length, { timeout: 30_000 }).toBe(1);
    const [said] = heldWarnings(logger);
    expect(said!.msg).toMatch(/^workforce-webhooks: every connection of the pg pool \(max 2\)/);
    expect(said!.msg).toContain('give the pool more connections than the events that run at once');
    expect(logger.lines.filter((line) => line.msg?.includes('connectionTimeoutMillis'))).toEqual([]);
    release();
    for (const status of await answers) expect([200, 500, 503]).toContain(status);
    expect(heldWarnings(logger)).toHaveLength(1);
    await receiver.close({ timeoutMs: 5000 });
    store.close();
  });

  it('says nothing while the pool has a connection to spare', { timeout: 120_000 }, async () => {
    const { receiver, store, logger, release, holding, writes } = await setup(3);
    const answers = Promise.all([post(receiver), post(receiver)]);
    await expect.poll(holding, { timeout: 30_000 }).toBe(2);
    release();
    expect(await post(receiver)).toBe(200);
    expect(await answers).toEqual([200, 200]);
    expect(await writes()).toBe(3);
    expect(logger.lines.filter((line) => line.level === 'warn' || line.level === 'error')).toEqual([]);
    await receiver.close({ timeoutMs: 5000 });
    store.close();
  });
});
