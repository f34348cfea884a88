// PostgreSQL stopped while deliveries arrive: 503 with Retry-After, never a 2xx without a claim; serving again after.
import { createServer, type Server } from 'node:http';
import { createPostgresBackend } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReceiver, type Receiver } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createNodeHandler } from 'workforce-webhooks/node';
import { createPostgresStore } from 'workforce-webhooks/postgres';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { connectPostgres, postgresUrl } from '../setup/postgres-helpers.js';
import { type PostgresServer, startPostgresServer } from '../setup/postgres-server.js';
import { recordingLogger } from '../support/logger.js';
import { deliverUntilAccepted } from './cluster.js';

const secret = 'whsec_postgres_outage_test';

describe.skipIf(!postgresUrl)('PostgreSQL stopped while deliveries arrive', () => {
  // A server of this test's own, since it is stopped and started again.
  let postgres: PostgresServer;
  let receiver: Receiver;
  let server: Server;
  let url: string;
  const processed: string[] = [];

  beforeAll(async () => {
    postgres = await startPostgresServer();
    const pool = connectPostgres(postgres.url);
    const store = createPostgresStore({ pool, cleanupIntervalMs: 0 });
    await store.migrate();
    receiver = createReceiver({
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
    server = createServer(createNodeHandler(receiver));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
  }, 60_000);
  afterAll(async () => {
    server?.close();
    await receiver?.close({ timeoutMs: 2000 });
    await postgres?.dispose();
  });

  const signed = (count: number) =>
    Promise.all(
      Array.from({ length: count }, () => createSignedDelivery({ secret, type: 'leave.approved' })),
    );
  const post = async (delivery: Awaited<ReturnType<typeof signed>>[number]) => {
    const response = await fetch(url, { method: 'POST', headers: delivery.headers, body: delivery.body });
    return {
      status: response.status,
      retryAfter: response.headers.get('retry-after'),
      body: await response.text(),
    };
  };

  it('answers 503 with Retry-After while Postgres is down, and accepts again once it is back', {
    timeout: 120_000,
  }, async () => {
    const before = await signed(10);
    expect((await Promise.all(before.map(post))).map((a) => a.status)).toEqual(Array(10).fill(202));
    await expect.poll(() => processed.length, { timeout: 30_000 }).toBe(10);

    await postgres.stop({ crash: true });
    const during = await signed(20);
    const refused = await Promise.all(during.map(post));
    for (const answer of refused) {
      expect(answer.status).toBe(503);
      expect(answer.retryAfter).toMatch(/^\d+$/);
      expect(JSON.parse(answer.body)).toEqual({ error: 'store_unavailable' });
    }

    // Back, with its data, and the same receiver, never restarted, accepts the sender's retries.
    await postgres.start();
    const retried = await Promise.all(
      during.map((delivery) => deliverUntilAccepted(delivery, () => url, { pauseMs: 100 })),
    );
    expect(retried.map((answers) => answers.at(-1))).toEqual(Array(20).fill(202));
    // Never a 2xx before Postgres was back: every answer but the last was a refusal.
    for (const answers of retried)
      for (const status of answers.slice(0, -1)) expect([503, 'refused']).toContain(status);
    // Handlers ran for all 30. The in-memory list is not in the transaction: an attempt whose commit the crash cut
    // short ran again, and that is the guarantee (its database writes are the ones that happen once, checked below).
    await expect.poll(() => new Set(processed).size, { timeout: 60_000 }).toBe(30);

    // Every 2xx has its claim: the event's row is done, and committed with its handler's transaction.
    const check = connectPostgres(postgres.url);
    const ids = [...before, ...during].map((delivery) => delivery.event.id);
    await expect
      .poll(async () => {
        const { rows } = await check.query(
          'SELECT count(*)::int AS n FROM workforce_webhook_events WHERE id = ANY($1) AND token IS NULL AND committed',
          [ids],
        );
        return rows[0].n;
      })
      .toBe(30);
  });
});
