// On the Postgres you already run, no Redis: dedupe, a durable queue, and a handler's writes committed with the event. `DATABASE_URL=... npx tsx examples/postgres/server.ts`
// #region postgres
import { createPostgresBackend } from 'bullmq';
import express from 'express';
import pg from 'pg';
import { createReceiver } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createExpressMiddleware } from 'workforce-webhooks/express';
import { createPostgresStore } from 'workforce-webhooks/postgres';

// Unset or empty (a blank line in .env): a demo secret, for local trials only.
const secret = process.env.WORKFORCE_WEBHOOK_SECRET || 'whsec_demo_postgres_local_trials_only';
const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const port = Number(process.env.PORT ?? 3000);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`PORT=${process.env.PORT} is not a port: give 0 to 65535, e.g. PORT=3000`);
  process.exit(1);
}

// The pool's connections serve claims and the handlers' transactions: give it more than the queue's concurrency,
// and a connect timeout, so a host that stops answering (a firewall, a failover) cannot hold them for minutes.
const pool = new pg.Pool({ connectionString: databaseUrl, max: 20, connectionTimeoutMillis: 5000 });
pool.on('error', (error) => console.error('postgres:', error.message)); // a restart drops idle connections

const store = createPostgresStore({ pool });
// The dedupe table; or once, before deploying: npx workforce-webhooks migrate --postgres $DATABASE_URL. No Postgres
// at that address, or a login refused, is said in one line with its fix.
await store.migrate().catch((error: Error) => {
  console.error(error.message);
  process.exit(1);
});
await pool.query(`CREATE TABLE IF NOT EXISTS leave_blocks (
  event_id text PRIMARY KEY, employee_id text NOT NULL, start_date text NOT NULL, end_date text NOT NULL)`);

const receiver = createReceiver({
  secret,
  store, // duplicates are seen by every instance
  queue: createBullmqQueue({
    backend: createPostgresBackend, // BullMQ's jobs in Postgres: a 202 survives a crash
    connection: { connectionString: databaseUrl, migrate: true, connectionTimeoutMillis: 5000 },
  }),
});

receiver.on('leave.approved', async (event, ctx) => {
  // Written in the event's transaction: committed with its done mark, exactly once, whatever crashes.
  const db = await ctx.transaction();
  await db.query('INSERT INTO leave_blocks VALUES ($1, $2, $3, $4)', [
    event.id,
    event.data.employeeId,
    event.data.startDate,
    event.data.endDate,
  ]);
});

const app = express();
app.all('/webhooks/workforce', createExpressMiddleware(receiver)); // every method: 405 but for POST
const server = app.listen(port, (error) => {
  if (error) {
    // A port below 1024 needs root (EACCES): the next one would too, so 3000 is said instead.
    console.error(`port ${port}: ${error.message}; pick another with PORT=${port < 1024 ? 3000 : port + 1}`);
    process.exit(1);
  }
  // Say where it listens (PORT=0 picks a free port), as one JSON line.
  const address = server.address();
  const listening = typeof address === 'object' && address !== null ? address.port : port;
  console.log(JSON.stringify({ listening, url: `http://localhost:${listening}/webhooks/workforce` }));
});

// On Ctrl-C or SIGTERM, once (a second Ctrl-C stops at once): 503 to new deliveries, running handlers finish.
const shutdown = async (): Promise<void> => {
  process.off('SIGINT', shutdown).off('SIGTERM', shutdown);
  await receiver.close();
  server.close();
  store.close();
  await pool.end();
};
process.on('SIGINT', shutdown).on('SIGTERM', shutdown);
// #endregion postgres
