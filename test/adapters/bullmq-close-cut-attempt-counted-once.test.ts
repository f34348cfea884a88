// An attempt that `receiver.close()` cuts short on the BullMQ queue is counted exactly once: a retry (it stays stored
// and another instance runs it), whether the close is too short for BullMQ to record the failure, long enough for it
// to, or Redis is gone; an attempt of the last try that BullMQ records is a dead letter only.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  createMemoryStore,
  createReceiver,
  type QueuedEvent,
  type Receiver,
  silentLogger,
  type Telemetry,
} from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';
import { hasRedisServer, startRedisServer } from '../setup/redis-server.js';

const secret = 'whsec_bullmq_close_cut_attempt';
const encoder = new TextEncoder();
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

// What the receiver's telemetry hears of attempts: each start, each retry, each dead letter.
function recordingTelemetry() {
  const seen = {
    started: [] as number[],
    ended: [] as string[],
    retried: [] as number[],
    deadLettered: [] as string[],
  };
  const telemetry: Telemetry = {
    attempt: (_job: QueuedEvent, attempt: number) => {
      seen.started.push(attempt);
      return {
        end: (failure) =>
          void seen.ended.push(failure === undefined ? 'ok' : String((failure.error as Error)?.name)),
      };
    },
    retried: (_job, attempt) => void seen.retried.push(attempt),
    deadLettered: (letter) => void seen.deadLettered.push(letter.event.id),
  };
  return { telemetry, seen };
}

// A receiver whose only handler never settles (it ignores its signal), so the close must cut it.
function stuckReceiver(connection: string, name: string, attempts: number, telemetry: Telemetry): Receiver {
  return createReceiver({
    secret,
    store: createMemoryStore(),
    queue: createBullmqQueue({ connection: connectRedis(connection), name, attempts }),
    logger: silentLogger,
    telemetry,
  }).on('leave.approved', () => new Promise<void>(() => {}));
}

async function deliver(receiver: Receiver): Promise<string> {
  const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
  const answer = await receiver.handle({
    method: 'POST',
    headers: delivery.headers,
    body: encoder.encode(delivery.body),
  });
  expect(answer.status).toBe(202);
  return JSON.parse(delivery.body).id as string;
}

describe.skipIf(!redisUrl)('an attempt cut short by close() on the BullMQ queue', () => {
  it.each([
    ['a close too short for BullMQ to record the failure', 1],
    ['a close that may or may not leave BullMQ time to record the failure', 300],
    ['a close long enough for BullMQ to record the failure', 6000],
  ])('%s counts it once, as a retry', { timeout: 60_000 }, async (_label, timeoutMs) => {
    const { telemetry, seen } = recordingTelemetry();
    const receiver = stuckReceiver(redisUrl, uniqueName('close-cut'), 5, telemetry);
    await deliver(receiver);
    await vi.waitFor(() => expect(seen.started).toEqual([1]), { timeout: 20_000, interval: 20 });

    await receiver.close({ timeoutMs });
    // Anything BullMQ still had to say has had its turn.
    await sleep(200);

    expect(seen.ended).toHaveLength(1);
    expect(seen.retried).toEqual([1]);
    expect(seen.deadLettered).toEqual([]);
  });

  it('the last attempt recorded by BullMQ is a dead letter, not a retry too', {
    timeout: 60_000,
  }, async () => {
    const { telemetry, seen } = recordingTelemetry();
    const receiver = stuckReceiver(redisUrl, uniqueName('close-cut-last'), 1, telemetry);
    const id = await deliver(receiver);
    await vi.waitFor(() => expect(seen.started).toEqual([1]), { timeout: 20_000, interval: 20 });

    await receiver.close({ timeoutMs: 6000 });
    await sleep(200);

    expect(seen.retried).toEqual([]);
    expect(seen.deadLettered).toEqual([id]);
  });
});

describe.skipIf(!hasRedisServer())(
  'an attempt cut short by close() while Redis cannot record its failure',
  () => {
    it.each([
      ['stopped', 'stop'],
      ['alive but silent', 'pause'],
    ] as const)('Redis %s: counted once, as a retry', { timeout: 60_000 }, async (_label, how) => {
      const server = await startRedisServer();
      cleanups.push(() => server.dispose());
      const { telemetry, seen } = recordingTelemetry();
      const receiver = stuckReceiver(server.url, uniqueName('close-cut-away'), 5, telemetry);
      await deliver(receiver);
      await vi.waitFor(() => expect(seen.started).toEqual([1]), { timeout: 20_000, interval: 20 });
      if (how === 'stop') await server.stop();
      else server.pause();

      await receiver.close({ timeoutMs: 2000 });
      await sleep(200);

      expect(seen.ended).toHaveLength(1);
      expect(seen.retried).toEqual([1]);
      expect(seen.deadLettered).toEqual([]);
    });
  },
);
