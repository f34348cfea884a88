// A receiver process for bullmq-offline-queue.test.ts: a BullMQ queue opened from a client with its offline queue
// off (the store's advice), one event running and two waiting. It prints a tick every 100 ms while its event loop
// turns, and lets the running handler finish when a line arrives on stdin.
import { Redis } from 'ioredis';
import { createMemoryStore, createReceiver, silentLogger } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createSignedDelivery } from 'workforce-webhooks/testing';

const secret = 'whsec_bullmq_offline_instance';
const client = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
client.on('error', () => {});
let release!: () => void;
const held = new Promise<void>((resolve) => {
  release = resolve;
});
let runs = 0;
const receiver = createReceiver({
  secret,
  logger: silentLogger,
  store: createMemoryStore(),
  queue: createBullmqQueue({ connection: client, name: 'offline', concurrency: 1 }),
}).on('leave.approved', async () => {
  runs += 1;
  if (runs === 1) await held;
});
process.stdin.once('data', () => release());
for (let i = 0; i < 3; i++) {
  const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
  const answer = await receiver.handle({
    method: 'POST',
    headers: delivery.headers,
    body: new TextEncoder().encode(delivery.body),
  });
  if (answer.status !== 202) throw new Error(`delivery answered ${answer.status}`);
  while (i === 0 && runs === 0) await new Promise((resolve) => setTimeout(resolve, 20));
}
process.stdout.write('running\n');
setInterval(() => process.stdout.write('tick\n'), 100);
