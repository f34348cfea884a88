// close() while deliveries keep arriving over HTTP: each is answered (accepted, or 503 shutting_down with Retry-After),
// none hangs, and every accepted event ends processed, a dead letter, or (BullMQ) stored for the next instance.
import { createServer, type Server } from 'node:http';
import type { Redis } from 'ioredis';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  byDefaultKeys,
  createMemoryQueue,
  createReceiver,
  type DeadLetter,
  type EventQueue,
  type Receiver,
  silentLogger,
} from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createNodeHandler } from 'workforce-webhooks/node';
import { createRedisStore } from 'workforce-webhooks/redis';
import { createSignedDelivery, type SignedDelivery } from 'workforce-webhooks/testing';
import { post } from '../contract/adapter-client.js';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';
import { recordingLogger } from '../support/logger.js';

const secret = 'whsec_lifecycle_close_under_traffic';

type Setup = {
  readonly store: 'memory' | 'redis';
  readonly queue: 'memory' | 'bullmq';
  readonly mode: 'queue' | 'inline';
  /** One record for every event (the sample's leave request): each waits for the one before. */
  readonly ordering: boolean;
};

const SETUPS: readonly Setup[] = [
  { store: 'memory', queue: 'memory', mode: 'queue', ordering: false },
  { store: 'redis', queue: 'memory', mode: 'queue', ordering: false },
  { store: 'memory', queue: 'bullmq', mode: 'queue', ordering: false },
  { store: 'redis', queue: 'bullmq', mode: 'queue', ordering: false },
  { store: 'memory', queue: 'memory', mode: 'inline', ordering: false },
  { store: 'redis', queue: 'bullmq', mode: 'inline', ordering: false },
  { store: 'memory', queue: 'memory', mode: 'queue', ordering: true },
  { store: 'redis', queue: 'bullmq', mode: 'queue', ordering: true },
  { store: 'redis', queue: 'bullmq', mode: 'inline', ordering: true },
];

const serve = async (receiver: Receiver): Promise<{ url: string; server: Server }> => {
  const server = createServer(createNodeHandler(receiver));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/`, server };
};

describe.skipIf(!redisUrl)('deliveries arriving over HTTP while close() runs', () => {
  it.each(SETUPS)(
    '$store store × $queue queue, $mode mode, ordering $ordering: each answered, and each accepted one processed or kept',
    { timeout: 120_000 },
    async ({ store, queue, mode, ordering }) => {
      const name = uniqueName('close-traffic');
      const processed = new Map<string, number>();
      const letters: DeadLetter[] = [];
      // Ordering on: an event older than one of its record already handled is skipped, never run (spec rule 4).
      const stale = new Set<string>();
      const logger = recordingLogger();
      const storeClients: Redis[] = [];
      const make = (): Receiver =>
        createReceiver({
          secret,
          mode,
          logger: storeClients.length === 0 ? logger : silentLogger,
          ...(store === 'redis'
            ? {
                store: createRedisStore({
                  client: storeClients[storeClients.push(connectRedis()) - 1]!,
                  prefix: `${name}:store:`,
                }),
              }
            : {}),
          queue: (queue === 'bullmq'
            ? createBullmqQueue({ connection: connectRedis(), name, backoff: () => 50 })
            : createMemoryQueue({ backoff: () => 50 })) as EventQueue,
          onDeadLetter: (letter) => void letters.push(letter),
          ...(ordering
            ? { ordering: { key: byDefaultKeys() }, onStale: (event) => void stale.add(event.id) }
            : {}),
        }).on('leave.approved', async (event, ctx) => {
          // Well-behaved: a short piece of work that stops when its signal is aborted.
          await new Promise<void>((resolve, reject) => {
            const timer = setTimeout(resolve, 30);
            ctx.signal.addEventListener('abort', () => {
              clearTimeout(timer);
              reject(ctx.signal.reason);
            });
          });
          processed.set(event.id, (processed.get(event.id) ?? 0) + 1);
        });
      const first = make();
      const { url, server } = await serve(first);
      onTestFinished(() => void server.close());

      const deliveries: SignedDelivery<'leave.approved'>[] = await Promise.all(
        Array.from({ length: 60 }, () => createSignedDelivery({ secret, type: 'leave.approved' })),
      );
      // Sent one after another in three streams, with close() called once the first answers are in.
      const answers = new Map<string, Awaited<ReturnType<typeof post>>>();
      let sent = 0;
      const stream = async (): Promise<void> => {
        while (sent < deliveries.length) {
          const delivery = deliveries[sent++]!;
          answers.set(delivery.event.id, await post(url, delivery));
        }
      };
      const streams = [stream(), stream(), stream()];
      await expect.poll(() => answers.size, { timeout: 30_000 }).toBeGreaterThan(10);
      await first.close({ timeoutMs: 5000 });
      // As the README's shutdown does: the store's client is closed as soon as close() resolves.
      await storeClients[0]?.quit();
      await Promise.all(streams);

      const accepted: string[] = [];
      const refused: string[] = [];
      for (const delivery of deliveries) {
        const answer = answers.get(delivery.event.id)!;
        if (answer.status === 503) {
          expect(JSON.parse(answer.text)).toEqual({ error: 'shutting_down' });
          expect(answer.headers.get('retry-after')).toMatch(/^\d+$/);
          refused.push(delivery.event.id);
        } else {
          expect([200, 202]).toContain(answer.status);
          if (JSON.parse(answer.text).stale === true) stale.add(delivery.event.id);
          accepted.push(delivery.event.id);
        }
      }
      expect(accepted.length).toBeGreaterThan(0);
      expect(refused.length).toBeGreaterThan(0);

      // The next instance: takes the jobs BullMQ kept, and the sender's retries of what was refused.
      const second = make();
      onTestFinished(() => second.close({ timeoutMs: 5000 }));
      for (const id of refused) {
        const delivery = deliveries.find((d) => d.event.id === id)!;
        const answer = await second.handle({
          method: 'POST',
          headers: delivery.headers,
          body: delivery.body,
        });
        expect([200, 202]).toContain(answer.status);
        if (JSON.parse(answer.body).stale === true) stale.add(id);
        await answer.background;
      }
      const lettered = (): Set<string> => new Set(letters.map((letter) => letter.event.id));
      await expect
        .poll(
          () =>
            deliveries
              .map(({ event }) => event.id)
              .filter((id) => !processed.has(id) && !lettered().has(id) && !stale.has(id)),
          { timeout: 60_000, interval: 100 },
        )
        .toEqual([]);
      // A deploy is normal traffic: nothing said above info.
      expect(logger.lines.filter((line) => line.level === 'warn' || line.level === 'error')).toEqual([]);
      // Nothing ran twice that finished once.
      for (const [id, runs] of processed) expect({ id, runs }).toEqual({ id, runs: 1 });
    },
  );
});
