// Several instances behind a load balancer: the Redis dedupe store and the BullMQ queue. `REDIS_URL=... npx tsx examples/scaling/server.ts`
// #region imports
import express from 'express';
import { Redis } from 'ioredis';
import { createReceiver } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createExpressMiddleware } from 'workforce-webhooks/express';
import { createRedisStore } from 'workforce-webhooks/redis';

// #endregion imports

const secret = process.env.WORKFORCE_WEBHOOK_SECRET ?? 'whsec_demo_scaling_local_trials_only';

// #region scaling
// One client for the store: `maxRetriesPerRequest: 1` makes a Redis outage fail fast, so deliveries are answered
// 503 (the service retries them) instead of waiting past its 10 s. The queue opens its own connections from it.
const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });

const receiver = createReceiver({
  secret,
  store: createRedisStore({ client: redis }), // duplicates are seen by every instance
  queue: createBullmqQueue({ connection: redis, name: 'workforce-webhooks' }), // a 202 survives a crash
});

receiver.on('leave.approved', async (event) => {
  console.log(JSON.stringify({ processed: event.id, type: event.type, pid: process.pid }));
});

const app = express();
app.post('/webhooks/workforce', createExpressMiddleware(receiver));
const server = app.listen(Number(process.env.PORT ?? 3000));

// Rolling deploys: stop taking deliveries (503), let running handlers finish, then close what we opened.
process.once('SIGTERM', async () => {
  await receiver.close();
  server.close();
  await redis.quit();
});
// #endregion scaling

server.once('listening', () => {
  const address = server.address();
  console.log(
    JSON.stringify({ listening: typeof address === 'object' && address !== null ? address.port : null }),
  );
});
