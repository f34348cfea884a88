// close() while Redis is silent (SIGSTOP: its sockets open, no answer), deliveries mid-claim and events running,
// ordering on: close() still ends near its deadline, nothing rejects unhandled, and once Redis answers again the next
// instance runs every event answered 202 that was not processed here.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, onTestFinished } from 'vitest';
import { byDefaultKeys, createReceiver, type Receiver } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createRedisStore } from 'workforce-webhooks/redis';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';
import { startRedisServer } from '../setup/redis-server.js';
import { recordingLogger } from '../support/logger.js';
import { signedLeave } from '../support/ordering-scenario.js';

const secret = 'whsec_close_silent_redis';

describe.skipIf(!redisUrl)('close() with Redis silent, ordering on', () => {
  it('ends near its timeoutMs; the accepted events run on the next instance once Redis answers', {
    timeout: 60_000,
  }, async () => {
    const redis = await startRedisServer();
    onTestFinished(() => redis.dispose());
    const name = uniqueName('close-silent');
    const processed = new Set<string>();
    const instance = (): Receiver => {
      const logger = recordingLogger();
      return createReceiver({
        secret,
        logger,
        leaseMs: 1000,
        storeTimeoutMs: 500,
        store: createRedisStore({
          client: connectRedis(redis.url),
          prefix: `${name}:`,
          leaseMs: 1000,
          logger,
        }),
        queue: createBullmqQueue({
          connection: connectRedis(redis.url),
          name,
          concurrency: 4,
          lockDurationMs: 1000,
          stalledIntervalMs: 500,
        }),
        ordering: { key: byDefaultKeys() },
        onStale: (event) => void processed.add(event.id),
      }).on(['leave.requested', 'leave.approved'], async (event, { signal }) => {
        await sleep(100 + Math.random() * 300, undefined, { signal });
        processed.add(event.id);
      });
    };
    const first = instance();
    const signed = await Promise.all(
      Array.from({ length: 20 }, (_, i) => signedLeave(secret, 'leave.requested', i, `key-${i % 4}`)),
    );
    const answers = signed.slice(0, 16).map((delivery) => first.handle(delivery));
    await sleep(150);
    redis.pause();
    // Caught mid-claim by the silence.
    const late = signed.slice(16).map((delivery) => first.handle(delivery));
    const began = performance.now();
    const ended = await Promise.race([
      first.close({ timeoutMs: 1000 }).then(() => 'closed' as const),
      sleep(10_000, 'still closing' as const),
    ]);
    const tookMs = performance.now() - began;
    redis.resume();
    expect(ended).toBe('closed');
    // Its deadline, with a wide margin: a close that waits for a silent Redis would take the 10 s above, or for ever.
    expect(tookMs).toBeLessThan(4000);
    const answered = await Promise.all([...answers, ...late]);
    const accepted = answered.flatMap((answer, i) => (answer.status === 202 ? [signed[i]!.event.id] : []));

    const second = instance();
    onTestFinished(() => second.close({ timeoutMs: 5000 }));
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
  });
});
