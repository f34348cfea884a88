// The Postgres store's cleanup and lapsed claims: done ids go after their window, a claim its owner may still mark done stays.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createReceiver } from 'workforce-webhooks';
import { createPostgresStore, type PostgresStore } from 'workforce-webhooks/postgres';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { connectPostgres, postgresUrl, uniqueTable } from '../setup/postgres-helpers.js';
import { recordingLogger } from '../support/logger.js';

const secret = 'whsec_postgres_cleanup_test';
const DAY = 86_400_000;

const migrated = async (): Promise<{
  pool: ReturnType<typeof connectPostgres>;
  table: string;
  store: PostgresStore;
}> => {
  const pool = connectPostgres();
  const table = uniqueTable('lapsed');
  const store = createPostgresStore({ pool, table, cleanupIntervalMs: 0 });
  await store.migrate();
  return { pool, table, store };
};

// An inline receiver whose first run holds the whole pool past its lease (renewals time out, nobody takes the id),
// running `meanwhile` before it returns; resolves with the first delivery's status, its redelivery's, and the runs.
async function lapsedInlineRun(meanwhile: (table: string) => Promise<unknown>) {
  const pool = connectPostgres(postgresUrl, { max: 2 });
  const table = uniqueTable('lapsed');
  const store = createPostgresStore({ pool, table, timeoutMs: 200, cleanupIntervalMs: 0 });
  await store.migrate();
  const receiver = createReceiver({
    secret,
    store,
    logger: recordingLogger(),
    leaseMs: 300,
    storeTimeoutMs: 200,
    mode: 'inline',
  });
  let runs = 0;
  receiver.on('leave.approved', async () => {
    runs += 1;
    if (runs > 1) return;
    const held = [await pool.connect(), await pool.connect()];
    await sleep(600);
    await meanwhile(table);
    for (const client of held) client.release();
  });
  const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
  const post = () =>
    receiver.handle({
      method: 'POST',
      headers: delivery.headers,
      body: new TextEncoder().encode(delivery.body),
    });
  const first = await post();
  await sleep(300);
  const again = await post(); // the sender's redelivery (a lost answer, a duplicate)
  await receiver.close();
  return { first: first.status, again: again.status, runs };
}

describe.skipIf(!postgresUrl)('cleanup of a lapsed claim nobody took', () => {
  it('keeps a lapsed claim nobody took through a cleanup, so its owner still marks it done', async () => {
    const { store } = await migrated();
    const id = crypto.randomUUID();
    const claim = await store.claim(id, 50);
    if (claim.status !== 'claimed') throw new Error('expected a claim');
    await sleep(200); // renewals stopped a while (an outage, a busy event loop): lapsed, nobody took it
    await store.cleanup();
    expect(await store.complete(id, claim.token, DAY)).toBe(true);
    expect(await store.claim(id, 30_000)).toEqual({ status: 'done' });
  });

  it('keeps a lapsed claim nobody took through a cleanup, so its owner still renews it', async () => {
    const { store } = await migrated();
    const id = crypto.randomUUID();
    const claim = await store.claim(id, 50);
    if (claim.status !== 'claimed') throw new Error('expected a claim');
    await sleep(200);
    await store.cleanup();
    expect(await store.renew(id, claim.token, 30_000)).toBe(true);
    expect(await store.claim(id, 30_000)).toEqual({ status: 'in_progress' });
  });

  it('deletes done ids past their window and claims lapsed over a day ago; keeps live rows and recent lapses', async () => {
    const { pool, table, store } = await migrated();
    const rows: [string, string | null, string, boolean][] = [
      ['done-expired', null, '1 second', false],
      ['committed-expired', 'token', '1 second', true],
      ['claim-lapsed-long-ago', 'token', '25 hours', false],
      ['claim-lapsed-recently', 'token', '1 second', false],
      ['claim-lapsed-23-hours-ago', 'token', '23 hours', false],
    ];
    for (const [id, token, ago, committed] of rows)
      await pool.query(
        `INSERT INTO ${table} (id, token, expires_at, committed) VALUES ($1, $2, now() - $3::interval, $4)`,
        [id, token, ago, committed],
      );
    expect((await store.claim('live', 30_000)).status).toBe('claimed');
    expect(await store.cleanup()).toBe(3);
    const { rows: left } = await pool.query(`SELECT id FROM ${table} ORDER BY id`);
    expect(left.map((row) => row.id)).toEqual(['claim-lapsed-23-hours-ago', 'claim-lapsed-recently', 'live']);
  });
});

describe.skipIf(!postgresUrl)('a lapsed claim nobody took, through the receiver', () => {
  it("answers an inline event's redelivery as a duplicate when another instance's cleanup ran while its lease had lapsed", async () => {
    const outcome = await lapsedInlineRun((table) =>
      createPostgresStore({ pool: connectPostgres(), table, cleanupIntervalMs: 0 }).cleanup(),
    );
    expect(outcome).toEqual({ first: 200, again: 200, runs: 1 });
  });

  it("answers an inline event's redelivery as a duplicate when its lease lapsed while nobody took it", async () => {
    const outcome = await lapsedInlineRun(async () => {});
    expect(outcome).toEqual({ first: 200, again: 200, runs: 1 });
  });
});
