// Inline mode on two instances sharing one real store (Redis, then PostgreSQL): copies of an event at the same
// moment, a handler slower than the lease, and close() in the middle of a run, each event run to its end once.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createReceiver,
  type DedupeStore,
  type Receiver,
  silentLogger,
  type WebhookResponse,
} from 'workforce-webhooks';
import { createPostgresStore } from 'workforce-webhooks/postgres';
import { createRedisStore } from 'workforce-webhooks/redis';
import { createSignedDelivery, type SignedDelivery } from 'workforce-webhooks/testing';
import { connectPostgres, postgresUrl, uniqueTable } from '../setup/postgres-helpers.js';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';

const secret = 'whsec_inline_two_instances_test';
const encoder = new TextEncoder();
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const handle = (receiver: Receiver, delivery: SignedDelivery<string>): Promise<WebhookResponse> =>
  receiver.handle({ method: 'POST', headers: delivery.headers, body: encoder.encode(delivery.body) });

// The sender: posts until a 2xx (its two days of retries, compressed), to `receivers` in turn; the statuses it got.
async function deliver(receivers: readonly Receiver[], delivery: SignedDelivery<string>, first = 0) {
  const statuses: number[] = [];
  for (let i = first; statuses.length < 200; i++) {
    const answer = await handle(receivers[i % receivers.length]!, delivery);
    statuses.push(answer.status);
    if (answer.status < 300) return statuses;
    await sleep(50);
  }
  return statuses;
}

type StoreFactory = () => Promise<DedupeStore>;

const scenarios = (name: string, skip: boolean, newStore: () => Promise<StoreFactory>) =>
  describe.skipIf(skip)(`inline mode, two instances on one ${name} store`, () => {
    // Two receivers on one store (each with its own client), every run counted by event id.
    async function twoInstances(options: {
      leaseMs?: number;
      handler?: (signal: AbortSignal) => Promise<void>;
    }) {
      const storeOf = await newStore();
      const runs = new Map<string, number>();
      const ended = new Map<string, number>();
      const receivers = await Promise.all(
        [0, 1].map(async () => {
          const receiver = createReceiver({
            secret,
            mode: 'inline',
            logger: silentLogger,
            leaseMs: options.leaseMs ?? 30_000,
            store: await storeOf(),
          });
          receiver.on('leave.approved', async (event, ctx) => {
            runs.set(event.id, (runs.get(event.id) ?? 0) + 1);
            await options.handler?.(ctx.signal);
            ended.set(event.id, (ended.get(event.id) ?? 0) + 1);
          });
          cleanups.push(() => receiver.close({ timeoutMs: 3000 }));
          return receiver;
        }),
      );
      return { receivers, runs, ended };
    }

    it('runs each of 30 events once when its copies reach both instances at the same moment', {
      timeout: 60_000,
    }, async () => {
      const { receivers, runs } = await twoInstances({ handler: () => sleep(30) });
      const deliveries = await Promise.all(
        Array.from({ length: 30 }, () => createSignedDelivery({ secret, type: 'leave.approved' })),
      );
      const statuses = await Promise.all(
        deliveries.flatMap((delivery) => [deliver(receivers, delivery, 0), deliver(receivers, delivery, 1)]),
      );
      expect(statuses.flat().every((status) => [200, 409].includes(status))).toBe(true);
      expect([...runs.values()]).toEqual(deliveries.map(() => 1));
    });

    it('keeps a handler slower than the lease the only run while copies keep reaching the other instance', {
      timeout: 60_000,
    }, async () => {
      const { receivers, runs, ended } = await twoInstances({ leaseMs: 1000, handler: () => sleep(3500) });
      const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
      const first = handle(receivers[0]!, delivery);
      await sleep(100);
      const copies: number[] = [];
      while (copies.length < 30) {
        copies.push((await handle(receivers[1]!, delivery)).status);
        await sleep(100);
      }
      expect((await first).status).toBe(200);
      const after = await handle(receivers[1]!, delivery);
      expect({
        copies: [...new Set(copies)].sort(),
        after: after.status,
        runs: runs.get(delivery.event.id),
      }).toEqual({
        copies: copies.includes(200) ? [200, 409] : [409],
        after: 200,
        runs: 1,
      });
      expect(ended.get(delivery.event.id)).toBe(1);
    });

    it("answers 503 for the run close() cuts, and the sender's retry runs it on the other instance at once", {
      timeout: 60_000,
    }, async () => {
      let started: () => void = () => {};
      const running = new Promise<void>((resolve) => {
        started = resolve;
      });
      // The first run waits for its signal (close() aborts it); the retry's run returns at once.
      const { receivers, runs, ended } = await twoInstances({
        handler: async (signal) => {
          if ([...runs.values()].reduce((sum, count) => sum + count, 0) > 1) return;
          started();
          await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
          throw signal.reason;
        },
      });
      const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
      const first = handle(receivers[0]!, delivery);
      await running;
      await receivers[0]!.close({ timeoutMs: 1000 });
      const cut = await first;
      const retry = await handle(receivers[1]!, delivery);
      expect({
        cut: cut.status,
        retry: retry.status,
        runs: runs.get(delivery.event.id),
        ended: ended.get(delivery.event.id),
      }).toEqual({
        cut: 503,
        retry: 200,
        runs: 2,
        ended: 1,
      });
    });
  });

scenarios('Redis', !redisUrl, async () => {
  const prefix = `${uniqueName('inline-two')}:`;
  return async () => createRedisStore({ client: connectRedis(), prefix });
});

scenarios('PostgreSQL', !postgresUrl, async () => {
  const table = uniqueTable('inline_two');
  await createPostgresStore({ pool: connectPostgres(), table, cleanupIntervalMs: 0 }).migrate();
  return async () => createPostgresStore({ pool: connectPostgres(), table, cleanupIntervalMs: 0 });
});
