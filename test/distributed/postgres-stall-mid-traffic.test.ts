// PostgreSQL paused (SIGSTOP on the postmaster and its backends) under a steady stream, store and queue on it: every
// delivery during the stall answered 503 within the deadline, none 2xx; after SIGCONT, every event run once.
import { setTimeout as sleep } from 'node:timers/promises';
import { createPostgresBackend } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReceiver } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createPostgresStore } from 'workforce-webhooks/postgres';
import { connectPostgres, postgresUrl } from '../setup/postgres-helpers.js';
import { type PostgresServer, startPostgresServer } from '../setup/postgres-server.js';
import { recordingLogger } from '../support/logger.js';
import { type Served, serveReceiver, signedDeliveries } from './outage.js';

const secret = 'whsec_postgres_stall_mid_traffic_test';
const STORE_TIMEOUT_MS = 500;
// What a 503 may take past storeTimeoutMs on a loaded test machine: the HTTP round trip and the event loop.
const MARGIN_MS = 1000;

describe.skipIf(!postgresUrl)('PostgreSQL paused while deliveries arrive', () => {
  let postgres: PostgresServer;
  let served: Served;

  beforeAll(async () => {
    postgres = await startPostgresServer();
    const pool = connectPostgres(postgres.url, { connectionTimeoutMillis: 1000 });
    const store = createPostgresStore({ pool, cleanupIntervalMs: 0, timeoutMs: STORE_TIMEOUT_MS });
    await store.migrate();
    await pool.query('CREATE TABLE stall_rows (event_id text NOT NULL)');
    const receiver = createReceiver({
      secret,
      store,
      storeTimeoutMs: STORE_TIMEOUT_MS,
      logger: recordingLogger(),
      queue: createBullmqQueue({
        backend: createPostgresBackend,
        connection: { connectionString: postgres.url, migrate: true, max: 4 },
        name: 'stall',
        backoff: () => 50,
      }),
    });
    receiver.on('leave.rejected', async (event, ctx) => {
      const db = await ctx.transaction();
      await db.query('INSERT INTO stall_rows (event_id) VALUES ($1)', [event.id]);
      await sleep(20);
    });
    served = await serveReceiver(receiver);
  }, 60_000);
  afterAll(async () => {
    await postgres?.resume();
    await served?.close();
    await postgres?.dispose();
  });

  it('answers 503 within storeTimeoutMs while it is paused, none 2xx, and runs each event once after', {
    timeout: 120_000,
  }, async () => {
    const deliveries = await signedDeliveries(secret, 120, 'leave.rejected');
    const answers: {
      readonly sentAt: number;
      readonly answeredAt: number;
      readonly status: number;
      readonly retryAfter: string | null;
    }[] = [];
    // Each delivery sent 15 ms after the one before and retried until accepted, as the sender would.
    const sending = deliveries.map(async (delivery, i) => {
      await sleep(i * 15);
      for (;;) {
        const sentAt = Date.now();
        const answer = await served.post(delivery).catch(() => undefined);
        const status = answer?.status ?? 0;
        answers.push({ sentAt, answeredAt: Date.now(), status, retryAfter: answer?.retryAfter ?? null });
        if (status >= 200 && status < 300) return;
        await sleep(100);
      }
    });
    await expect
      .poll(() => answers.filter(({ status }) => status === 202).length, { timeout: 30_000, interval: 10 })
      .toBeGreaterThan(30);
    await postgres.pause();
    const pausedAt = Date.now();
    // Longer than the deadline, several times over.
    await sleep(4 * STORE_TIMEOUT_MS);
    const resumingAt = Date.now();
    await postgres.resume();
    await Promise.all(sending);

    // Sent once the server was silent and answered before it spoke again: never a 2xx, each a 503 with Retry-After
    // within the deadline.
    const during = answers.filter(({ sentAt, answeredAt }) => sentAt > pausedAt && answeredAt < resumingAt);
    expect(during.length).toBeGreaterThan(5);
    for (const answer of during) {
      expect(answer.status).toBe(503);
      expect(answer.retryAfter).toMatch(/^\d+$/);
      expect(answer.answeredAt - answer.sentAt).toBeLessThan(STORE_TIMEOUT_MS + MARGIN_MS);
    }

    // Every accepted event ran once: its app row once, its done mark committed with it.
    const check = connectPostgres(postgres.url);
    const ids = deliveries.map((delivery) => delivery.event.id);
    await expect
      .poll(
        async () =>
          (await check.query('SELECT count(DISTINCT event_id)::int AS n FROM stall_rows')).rows[0].n,
        { timeout: 60_000, interval: 100 },
      )
      .toBe(ids.length);
    const { rows } = await check.query(
      'SELECT event_id, count(*)::int AS n FROM stall_rows GROUP BY event_id HAVING count(*) <> 1',
    );
    expect(rows).toEqual([]);
    const committed = await check.query(
      'SELECT count(*)::int AS n FROM workforce_webhook_events WHERE id = ANY($1) AND committed',
      [ids],
    );
    expect(committed.rows[0].n).toBe(ids.length);
  });
});
