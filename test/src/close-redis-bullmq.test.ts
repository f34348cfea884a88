// close() on the Redis store and BullMQ, ordering on and off, mid-traffic: every event answered 202 is processed,
// a dead letter, or stays stored for the next instance, which then runs it; close() ends at its deadline.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, onTestFinished } from 'vitest';
import { byDefaultKeys, createReceiver, type Receiver } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createRedisStore } from 'workforce-webhooks/redis';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';
import { recordingLogger } from '../support/logger.js';
import { signedLeave } from '../support/ordering-scenario.js';

const secret = 'whsec_close_redis_bullmq';

describe.skipIf(!redisUrl).each([{ ordering: false }, { ordering: true }])(
  'close() on Redis and BullMQ mid-traffic: ordering $ordering',
  ({ ordering }) => {
    it.each([0, 300])(
      'timeoutMs %i: every 202 ends processed here, a dead letter, or on the next instance',
      {
        timeout: 60_000,
      },
      async (timeoutMs) => {
        const name = uniqueName('close');
        const prefix = `${name}:`;
        const processed = new Set<string>();
        let letGo!: () => void;
        const released = new Promise<void>((resolve) => {
          letGo = resolve;
        });
        const instance = (ignoring: boolean): Receiver => {
          const logger = recordingLogger();
          return createReceiver({
            secret,
            logger,
            leaseMs: 1000,
            store: createRedisStore({ client: connectRedis(), prefix, leaseMs: 1000, logger }),
            queue: createBullmqQueue({
              connection: connectRedis(),
              name,
              concurrency: 4,
              lockDurationMs: 1000,
              stalledIntervalMs: 500,
            }),
            ...(ordering
              ? {
                  ordering: { key: byDefaultKeys() },
                  onStale: (event: { id: string }) => void processed.add(event.id),
                }
              : {}),
          }).on(['leave.requested', 'leave.approved'], async (event, { signal }) => {
            if (ignoring && event.type === 'leave.approved')
              await Promise.race([released, sleep(50 + Math.random() * 400)]);
            else await sleep(50 + Math.random() * 400, undefined, { signal });
            processed.add(event.id);
          });
        };
        const first = instance(true);
        const signed = await Promise.all(
          Array.from({ length: 30 }, (_, i) =>
            signedLeave(secret, i % 2 === 0 ? 'leave.requested' : 'leave.approved', i, `key-${i % 5}`),
          ),
        );
        const answers = signed.slice(0, 24).map((delivery) => first.handle(delivery));
        await sleep(100);
        const late = signed.slice(24).map((delivery) => first.handle(delivery));
        const closes = [first.close({ timeoutMs }), first.close({ timeoutMs: 60_000 })];
        const ended = await Promise.race([
          Promise.all(closes).then(() => 'closed' as const),
          sleep(timeoutMs + 5000, 'still closing' as const),
        ]);
        letGo();
        expect(ended).toBe('closed');
        const answered = await Promise.all([...answers, ...late]);
        expect((await first.handle(signed[0]!)).status).toBe(503);

        const second = instance(false);
        onTestFinished(() => second.close({ timeoutMs: 5000 }));
        const accepted = answered.flatMap((answer, i) =>
          answer.status === 202 ? [signed[i]!.event.id] : [],
        );
        for (const answer of answered)
          if (answer.status !== 202)
            expect(JSON.parse(String(answer.body)), String(answer.status)).toEqual({
              error: 'shutting_down',
            });
        await expect
          .poll(
            async () => {
              const { items } = await second.deadLetters({ limit: 1000 });
              const dead = new Set(items.map((letter) => letter.event.id));
              return accepted.filter((id) => !processed.has(id) && !dead.has(id));
            },
            { timeout: 30_000, interval: 200 },
          )
          .toEqual([]);
      },
    );
  },
);
