// A handler that runs several times the job lock while the lock is renewed, with another instance's stalled checks
// looking all along: the event runs once, never taken over.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createMemoryStore,
  createReceiver,
  type DeadLetter,
  type Receiver,
  silentLogger,
} from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';

const secret = 'whsec_bullmq_long_handler';
const encoder = new TextEncoder();
const toClose: Receiver[] = [];
afterEach(async () => {
  await Promise.all(toClose.splice(0).map((each) => each.close({ timeoutMs: 2000 })));
});

async function deliver(receiver: Receiver, id: string) {
  const delivery = await createSignedDelivery({ secret, type: 'leave.approved', id });
  return receiver.handle({ method: 'POST', headers: delivery.headers, body: encoder.encode(delivery.body) });
}

describe.skipIf(!redisUrl)('a handler that outlives the job lock while renewals work', () => {
  it('runs once across two instances, its signal never aborted, and the job completes', {
    timeout: 60_000,
  }, async () => {
    const name = uniqueName('long-handler');
    const runs: { label: string; aborted: boolean }[] = [];
    const letters: DeadLetter[] = [];
    const make = (label: string): Receiver => {
      const receiver = createReceiver({
        secret,
        store: createMemoryStore(),
        // A 3 s lock renewed every second, stalled checks every half second: the handler runs over three locks' worth.
        queue: createBullmqQueue({
          connection: connectRedis(),
          name,
          lockDurationMs: 3000,
          stalledIntervalMs: 500,
        }),
        logger: silentLogger,
        onDeadLetter: (letter) => {
          letters.push(letter);
        },
      }).on('leave.approved', async (_event, ctx) => {
        const run = { label, aborted: false };
        runs.push(run);
        await sleep(10_000);
        run.aborted = ctx.signal.aborted;
      });
      toClose.push(receiver);
      return receiver;
    };
    const a = make('a');
    make('b');
    const id = crypto.randomUUID();
    expect((await deliver(a, id)).status).toBe(202);
    const redis = connectRedis();
    await expect.poll(() => redis.zscore(`bull:${name}:completed`, id), { timeout: 30_000 }).not.toBeNull();
    expect(runs).toHaveLength(1);
    expect(runs[0]!.aborted).toBe(false);
    expect(letters).toEqual([]);
  });
});
