// Several instances behind a load balancer: the Redis dedupe store and the BullMQ queue. `REDIS_URL=... npx tsx examples/scaling/server.ts`
// #region scaling
import express from 'express';
import { Redis } from 'ioredis';
import { byDefaultKeys, createReceiver } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createExpressMiddleware } from 'workforce-webhooks/express';
import { createRedisStore } from 'workforce-webhooks/redis';
import { metrics, telemetry } from './telemetry.js';

const secret = process.env.WORKFORCE_WEBHOOK_SECRET;
if (!secret) {
  console.error('Set WORKFORCE_WEBHOOK_SECRET to the endpoint secret (whsec_...)');
  process.exit(1);
}

// One client for the store: `maxRetriesPerRequest: 1` makes a Redis that is down fail at once, so deliveries are
// answered 503 (the service retries them); one that is up but silent is cut off by the receiver's storeTimeoutMs
// and queueTimeoutMs (2 s each). The queue opens its own connections from it.
const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });

const receiver = createReceiver({
  secret,
  store: createRedisStore({ client: redis }), // duplicates are seen by every instance
  queue: createBullmqQueue({ connection: redis, name: 'workforce-webhooks' }), // a 202 survives a crash
  // Spec rule 4: one event per record at a time on all instances, and never an older one over a newer one.
  // leave.* are keyed by leaveRequestId; here employee.* by employeeId too.
  ordering: { key: byDefaultKeys({ 'employee.*': (event) => event.data.employeeId as string | undefined }) },
  onStale: (event, newer) => console.log(JSON.stringify({ stale: event.id, newer: newer.id })),
  telemetry, // workforce_webhooks.* metrics, scraped on /metrics (see telemetry.ts)
});

receiver.on('leave.*', async (event, ctx) => {
  // ctx.orderingKey: the leave request; no other event of it runs meanwhile, and none newer has run yet.
  console.log(
    JSON.stringify({ processed: event.id, type: event.type, record: ctx.orderingKey, pid: process.pid }),
  );
});

const app = express();
app.all('/webhooks/workforce', createExpressMiddleware(receiver)); // every method: 405 but for POST
app.get('/metrics', metrics); // for Prometheus
const port = Number(process.env.PORT ?? 3000);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`PORT=${process.env.PORT} is not a port: give 0 to 65535, e.g. PORT=3000`);
  process.exit(1);
}
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

// Rolling deploys (SIGTERM) and Ctrl-C: stop taking deliveries (503), let running handlers finish, then close what
// we opened. A second signal stops at once.
const shutdown = async (): Promise<void> => {
  process.off('SIGINT', shutdown).off('SIGTERM', shutdown);
  await receiver.close();
  server.close();
  await redis.quit();
};
process.on('SIGINT', shutdown).on('SIGTERM', shutdown);
// #endregion scaling
