// One receiver process of the Postgres tests: Postgres store, BullMQ on Postgres, a transactional handler writing app rows.
import { setTimeout as sleep } from 'node:timers/promises';
import { createPostgresBackend } from 'bullmq';
import pg from 'pg';
import { createReceiver } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createPostgresStore } from 'workforce-webhooks/postgres';
import { requireEnv, serveInstance } from './serve-instance.js';

const url = requireEnv('POSTGRES_URL');
const run = requireEnv('RUN_NAME'); // this run's tables (<run>_events, <run>_app, <run>_runs, <run>_starts) and queue
const instance = requireEnv('INSTANCE');
const handlerMs = Number(process.env.HANDLER_MS ?? '0');
// After its insert, the handler says so on stdout and waits this long before returning (and the commit).
const pauseAfterInsertMs = Number(process.env.PAUSE_AFTER_INSERT_MS ?? '0');

const pool = new pg.Pool({ connectionString: url, max: 20 });
pool.on('error', () => {});
const receiver = createReceiver({
  secret: requireEnv('SECRET'),
  // A short lease, so a claim left by a killed instance lapses within the test.
  leaseMs: 2000,
  store: createPostgresStore({ pool, table: `${run}_events` }),
  queue: createBullmqQueue({
    backend: createPostgresBackend,
    connection: { connectionString: url, migrate: true, max: 10 },
    name: run,
    // In the kill tests a dead instance's jobs are taken over after a second rather than 20 s; elsewhere the
    // package's defaults, so that a loaded machine's late lock renewals do not run handlers a second time.
    lockDurationMs: Number(process.env.LOCK_MS ?? '10000'),
    stalledIntervalMs: Number(process.env.STALLED_MS ?? '5000'),
    maxStalledCount: 5,
    backoff: () => 10,
  }),
});

// The transactional handler: its app row commits with the event's done mark, or not at all.
receiver.on('leave.approved', async (event, ctx) => {
  await pool.query(`INSERT INTO ${run}_starts VALUES ($1, $2)`, [event.id, instance]);
  if (handlerMs > 0) await sleep(handlerMs);
  const db = await ctx.transaction();
  await db.query(`INSERT INTO ${run}_app VALUES ($1, $2)`, [event.id, instance]);
  if (pauseAfterInsertMs > 0) {
    process.stdout.write(`inserted ${event.id}\n`);
    await sleep(pauseAfterInsertMs);
  }
});
// A handler that does not ask for the transaction, counted in Postgres too.
receiver.onAny(async (event) => {
  await pool.query(`INSERT INTO ${run}_runs VALUES ($1, $2)`, [event.id, instance]);
});

// This script's own clients go last, after the drain: the receiver never closes what it did not open.
serveInstance(receiver, { release: () => pool.end() });
