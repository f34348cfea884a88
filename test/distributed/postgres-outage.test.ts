// PostgreSQL stopped while deliveries arrive: 503 with Retry-After, never a 2xx without a claim; serving again after,
// with the handlers' transactions in flight at the crash rolled back and run again, each event's app row once.
import { setTimeout as sleep } from 'node:timers/promises';
import { createPostgresBackend } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReceiver } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createPostgresStore } from 'workforce-webhooks/postgres';
import { connectPostgres, postgresUrl } from '../setup/postgres-helpers.js';
import { type PostgresServer, startPostgresServer } from '../setup/postgres-server.js';
import { recordingLogger } from '../support/logger.js';
import { deliverAcrossCrash, type Served, serveReceiver, signedDeliveries } from './outage.js';

const secret = 'whsec_postgres_outage_test';

describe.skipIf(!postgresUrl)('PostgreSQL stopped while deliveries arrive', () => {
  // A server of this test's own, since it is stopped and started again.
  let postgres: PostgresServer;
  let served: Served;
  const processed: string[] = [];

  beforeAll(async () => {
    postgres = await startPostgresServer();
    const pool = connectPostgres(postgres.url);
    const store = createPostgresStore({ pool, cleanupIntervalMs: 0 });
    await store.migrate();
    const receiver = createReceiver({
      secret,
      store,
      logger: recordingLogger(),
      queue: createBullmqQueue({
        backend: createPostgresBackend,
        connection: { connectionString: postgres.url, migrate: true, max: 4 },
        name: 'outage',
        backoff: () => 50,
      }),
    });
    receiver.on('leave.approved', async (event, ctx) => {
      const db = await ctx.transaction();
      await db.query('SELECT 1');
      processed.push(event.id);
    });
    // The second test's handler: an app row written in the event's transaction, held open a while so that the
    // crash finds transactions in flight.
    await pool.query('CREATE TABLE outage_rows (event_id text NOT NULL)');
    receiver.on('leave.rejected', async (event, ctx) => {
      const db = await ctx.transaction();
      await db.query('INSERT INTO outage_rows (event_id) VALUES ($1)', [event.id]);
      await sleep(30);
    });
    served = await serveReceiver(receiver);
  }, 60_000);
  afterAll(async () => {
    await served?.close();
    await postgres?.dispose();
  });

  it('answers 503 with Retry-After while Postgres is down, and accepts again once it is back', {
    timeout: 120_000,
  }, async () => {
    const before = await signedDeliveries(secret, 10);
    expect((await Promise.all(before.map(served.post))).map((a) => a.status)).toEqual(Array(10).fill(202));
    await expect.poll(() => processed.length, { timeout: 30_000 }).toBe(10);

    // Back with its data, and the same receiver, never restarted, accepts the sender's retries.
    const { during, retried } = await deliverAcrossCrash(served, postgres, { secret, pauseMs: 100 });
    // Never a 2xx before Postgres was back: every answer but the last was a refusal.
    for (const answers of retried)
      for (const status of answers.slice(0, -1)) expect([503, 'refused']).toContain(status);
    // Handlers ran for all 30. The in-memory list is not in the transaction: an attempt whose commit the crash cut
    // short ran again, and that is the guarantee (its database writes are the ones that happen once, checked below).
    await expect.poll(() => new Set(processed).size, { timeout: 60_000 }).toBe(30);

    // Every 2xx has its claim: the event's row is committed with its handler's transaction. A committed row is done
    // whatever its token: the done mark written at accept (token NULL) may not land when Postgres goes down right
    // after the enqueue, and the store answers such a row `done` and never releases it.
    const check = connectPostgres(postgres.url);
    const ids = [...before, ...during].map((delivery) => delivery.event.id);
    await expect
      .poll(async () => {
        const { rows } = await check.query(
          'SELECT count(*)::int AS n FROM workforce_webhook_events WHERE id = ANY($1) AND committed',
          [ids],
        );
        return rows[0].n;
      })
      .toBe(30);
  });

  it('under a steady stream, with handlers in flight at the crash: no 2xx while it is down, each event once', {
    timeout: 120_000,
  }, async () => {
    const deliveries = await signedDeliveries(secret, 150, 'leave.rejected');
    const accepted: { readonly sentAt: number; readonly answeredAt: number }[] = [];
    // Each delivery is sent 15 ms after the one before and retried until accepted, as the sender would.
    const sending = deliveries.map(async (delivery, i) => {
      await sleep(i * 15);
      for (;;) {
        const sentAt = Date.now();
        const status = await served.post(delivery).then(
          (answer) => answer.status,
          () => 0,
        );
        if (status >= 200 && status < 300) return void accepted.push({ sentAt, answeredAt: Date.now() });
        await sleep(100);
      }
    });
    await expect.poll(() => accepted.length, { timeout: 30_000, interval: 10 }).toBeGreaterThan(40);
    await postgres.stop({ crash: true });
    const stoppedAt = Date.now();
    await sleep(1500);
    const restartingAt = Date.now();
    await postgres.start();
    await Promise.all(sending);

    // A request sent once the server was gone and answered before it came back never got a 2xx.
    const during = accepted.filter(
      ({ sentAt, answeredAt }) => sentAt > stoppedAt && answeredAt < restartingAt,
    );
    expect(during).toEqual([]);
    // Every event committed its done mark with its app row, once: the crash rolled back what was in flight. (Its
    // row may keep its claim's token: see the first test.)
    const check = connectPostgres(postgres.url);
    const ids = deliveries.map((delivery) => delivery.event.id);
    await expect
      .poll(
        async () =>
          (
            await check.query(
              'SELECT count(*)::int AS n FROM workforce_webhook_events WHERE id = ANY($1) AND committed',
              [ids],
            )
          ).rows[0].n,
        { timeout: 60_000, interval: 100 },
      )
      .toBe(ids.length);
    const { rows } = await check.query(
      'SELECT event_id, count(*)::int AS n FROM outage_rows GROUP BY event_id HAVING count(*) <> 1',
    );
    expect(rows).toEqual([]);
    expect((await check.query('SELECT count(DISTINCT event_id)::int AS n FROM outage_rows')).rows[0].n).toBe(
      ids.length,
    );
    // And every one is done for the sender: a copy of each is answered 200 duplicate, never run again.
    const copies = await Promise.all(deliveries.map((delivery) => served.post(delivery)));
    expect(new Set(copies.map((answer) => `${answer.status} ${answer.body}`))).toEqual(
      new Set(['200 {"received":true,"duplicate":true}']),
    );
  });
});
