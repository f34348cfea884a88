// Memory store × BullMQ on several instances: each instance's own memory store accepts every copy (202), and the one
// job per event id runs its handlers once.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { createReceiver } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';
import { recordingLogger } from '../support/logger.js';
import { pool } from './cluster.js';
import { type Served, serveReceiver, signedDeliveries } from './outage.js';

const secret = 'whsec_memory_store_bullmq';
const EVENTS = 200;
const served: Served[] = [];
afterEach(async () => {
  await Promise.all(served.splice(0).map((each) => each.close()));
});

describe.skipIf(!redisUrl)('memory store, BullMQ queue, two instances', () => {
  it('answers every copy in flight 202 and runs each event once (one job per event id)', {
    timeout: 120_000,
  }, async () => {
    const name = uniqueName('memory-store-bullmq');
    const runs = new Map<string, number>();
    for (const _ of ['a', 'b']) {
      const receiver = createReceiver({
        secret,
        logger: recordingLogger(),
        queue: createBullmqQueue({ connection: connectRedis(), name, backoff: () => 10 }),
      });
      receiver.on('leave.approved', async (event) => {
        // Long enough that the other copy is accepted while the first still runs, or waits.
        await sleep(20);
        runs.set(event.id, (runs.get(event.id) ?? 0) + 1);
      });
      served.push(await serveReceiver(receiver));
    }
    const deliveries = await signedDeliveries(secret, EVENTS);
    // Each event to both instances at once: neither's memory store knows of the other's claim.
    const answers = await pool(
      deliveries.flatMap((delivery) => served.map((instance) => () => instance.post(delivery))),
      32,
    );
    expect(new Set(answers.map((answer) => `${answer.status} ${answer.body}`))).toEqual(
      new Set(['202 {"received":true}']),
    );

    const ids = deliveries.map((delivery) => delivery.event.id);
    await expect
      .poll(() => ids.filter((id) => !runs.has(id)).length, { timeout: 60_000, interval: 50 })
      .toBe(0);
    // Both drained: a second job of an event would have run by now.
    await Promise.all(served.splice(0).map((each) => each.close()));
    expect([...runs].filter(([, count]) => count !== 1)).toEqual([]);
    expect(runs.size).toBe(EVENTS);
  });
});
