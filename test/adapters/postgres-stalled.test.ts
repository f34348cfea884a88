// The Postgres store on a PostgreSQL that stops answering without closing its connections (SIGSTOP): every call fails in time.
import { setTimeout as sleep } from 'node:timers/promises';
import { createPostgresBackend } from 'bullmq';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createReceiver } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createPostgresStore } from 'workforce-webhooks/postgres';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { connectPostgres, postgresUrl, uniqueTable } from '../setup/postgres-helpers.js';
import { type PostgresServer, startPostgresServer } from '../setup/postgres-server.js';
import { recordingLogger } from '../support/logger.js';

const secret = 'whsec_postgres_stalled_test';

// What `promise` did, or 'no answer' after `ms`.
const within = <T>(promise: Promise<T>, ms: number): Promise<string> =>
  Promise.race([
    promise.then(
      () => 'resolved',
      (error: unknown) => `rejected: ${(error as Error)?.message ?? error}`,
    ),
    sleep(ms).then(() => 'no answer'),
  ]);

describe.skipIf(!postgresUrl)('the Postgres store on a silent server', () => {
  // A server of this file's own: pausing the run's would stall every other file.
  let postgres: PostgresServer;
  beforeAll(async () => {
    postgres = await startPostgresServer();
  }, 60_000);
  afterEach(() => postgres.resume());
  afterAll(async () => {
    await sleep(500); // calls a failed test left waiting finish before the server goes
    await postgres?.dispose();
  });

  const store = async (label: string, options: { readonly migrate?: boolean } = {}) => {
    const pool = connectPostgres(postgres.url);
    const made = createPostgresStore({
      pool,
      table: uniqueTable(label),
      timeoutMs: 300,
      cleanupIntervalMs: 0,
    });
    if (options.migrate !== false) await made.migrate();
    return made;
  };

  it('answers a delivery 503 within storeTimeoutMs', async () => {
    const receiver = createReceiver({
      secret,
      store: await store('claim'),
      logger: recordingLogger(),
      storeTimeoutMs: 300,
    }).on('leave.approved', () => {});
    await postgres.pause();
    const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
    const started = performance.now();
    const answer = await receiver.handle({
      method: 'POST',
      headers: delivery.headers,
      body: new TextEncoder().encode(delivery.body),
    });
    expect(answer.status).toBe(503);
    expect(performance.now() - started).toBeLessThan(1000);
    await receiver.close({ timeoutMs: 1000 });
  });

  it('fails migrate() within timeoutMs, connecting included', async () => {
    const fresh = await store('migrate', { migrate: false });
    await postgres.pause();
    const started = performance.now();
    expect(await within(fresh.migrate(), 3000)).toMatch(
      /^rejected: workforce-webhooks: no answer within 300 ms/,
    );
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('fails migrate() within timeoutMs on a connection it already had', async () => {
    const migrated = await store('migrate_idle');
    // The pool keeps the connection migrate() used: the next one starts its statements on it.
    await postgres.pause();
    expect(await within(migrated.migrate(), 3000)).toMatch(
      /^rejected: workforce-webhooks: no answer within 300 ms/,
    );
  });

  it('fails cleanup() within timeoutMs', async () => {
    const migrated = await store('cleanup');
    await postgres.pause();
    expect(await within(migrated.cleanup(), 3000)).toMatch(
      /^rejected: workforce-webhooks: no answer within 300 ms/,
    );
  });

  it('ends receiver.close() within its timeout on BullMQ on Postgres while a transactional handler runs', async () => {
    const receiver = createReceiver({
      secret,
      store: await store('close'),
      logger: recordingLogger(),
      queue: createBullmqQueue({
        backend: createPostgresBackend,
        connection: { connectionString: postgres.url, migrate: true, max: 4 },
        name: `stalled-close-${crypto.randomUUID().slice(0, 8)}`,
      }),
    });
    let started = false;
    receiver.on('leave.approved', async (_event, ctx) => {
      const db = await ctx.transaction();
      started = true;
      await sleep(60_000, undefined, { signal: ctx.signal }).catch(() => {});
      await db.query('SELECT 1');
    });
    const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
    const answer = await receiver.handle({
      method: 'POST',
      headers: delivery.headers,
      body: new TextEncoder().encode(delivery.body),
    });
    expect(answer.status).toBe(202);
    await expect.poll(() => started, { timeout: 10_000 }).toBe(true);
    await postgres.pause();
    const closing = performance.now();
    expect(await within(receiver.close({ timeoutMs: 2000 }), 4000)).toBe('resolved');
    expect(performance.now() - closing).toBeLessThan(2500);
  }, 30_000);
});
