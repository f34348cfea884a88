// Redis killed and started again under a steady stream of deliveries (Redis store, BullMQ queue, Redis persisting every
// write): no 2xx while it is down, and every accepted event processed, once.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReceiver } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createRedisStore } from 'workforce-webhooks/redis';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';
import { hasRedisServer, REDIS_SERVER_BINARY } from '../setup/redis-server.js';
import { freePort } from '../support/free-port.js';
import { recordingLogger } from '../support/logger.js';
import { type Served, serveReceiver, signedDeliveries } from './outage.js';

const secret = 'whsec_redis_crash_under_deliveries';

/**
 * A redis-server with an append-only file synced on every write, as the README asks of production: a `kill -9` and a
 * start on the same port and directory bring back every write it answered (the stored jobs and done marks included).
 */
async function persistentRedis(): Promise<{
  url: string;
  crash(): Promise<void>;
  start(): Promise<void>;
  dispose(): Promise<void>;
}> {
  const dir = await mkdtemp(join(tmpdir(), 'wfwh-redis-aof-'));
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async (): Promise<void> => {
    const launched = spawn(
      REDIS_SERVER_BINARY,
      [
        ...['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', ''],
        ...['--appendonly', 'yes', '--appendfsync', 'always', '--maxmemory-policy', 'noeviction'],
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    await new Promise<void>((resolve, reject) => {
      let output = '';
      launched.stdout?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('Ready to accept connections')) {
          launched.stdout?.removeAllListeners('data');
          launched.stdout?.resume();
          resolve();
        }
      });
      launched.stderr?.resume();
      launched.once('exit', (code) => reject(new Error(`redis-server exited with ${code}\n${output}`)));
    });
    child = launched;
  };
  const crash = async (): Promise<void> => {
    const running = child;
    child = undefined;
    if (running === undefined || running.exitCode !== null) return;
    running.removeAllListeners('exit');
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGKILL');
    await exited;
  };
  await start();
  const dispose = async (): Promise<void> => {
    await crash();
    await rm(dir, { recursive: true, force: true });
  };
  return { url: `redis://127.0.0.1:${port}`, crash, start, dispose };
}

describe.skipIf(!redisUrl || !hasRedisServer())('Redis killed and started again under deliveries', () => {
  let redis: Awaited<ReturnType<typeof persistentRedis>>;
  let served: Served;
  const runs = new Map<string, number>();

  beforeAll(async () => {
    redis = await persistentRedis();
    const receiver = createReceiver({
      secret,
      logger: recordingLogger(),
      store: createRedisStore({ client: connectRedis(redis.url) }),
      queue: createBullmqQueue({
        connection: connectRedis(redis.url),
        name: uniqueName('crash-under-deliveries'),
        // Slower than deliveries arrive, so jobs wait in Redis when it dies.
        concurrency: 2,
        backoff: () => 50,
      }),
    });
    // A handler that takes a while, so the crash finds some running and more waiting in the queue.
    receiver.on('leave.rejected', async (event) => {
      await sleep(100);
      runs.set(event.id, (runs.get(event.id) ?? 0) + 1);
    });
    served = await serveReceiver(receiver);
  }, 60_000);
  afterAll(async () => {
    await served?.close();
    await redis?.dispose();
  });

  it('answers no 2xx while Redis is down, and processes every accepted event once after it is back', {
    timeout: 120_000,
  }, async () => {
    const deliveries = await signedDeliveries(secret, 150, 'leave.rejected');
    const accepted: { readonly sentAt: number; readonly answeredAt: number }[] = [];
    // Each delivery is sent 15 ms after the one before and retried until accepted, as the sender would.
    const sending = deliveries.map(async (delivery, i) => {
      await sleep(i * 15);
      for (;;) {
        const sentAt = Date.now();
        const status = await served.post(delivery).then(
          (answer) => answer.status,
          () => 0,
        );
        if (status >= 200 && status < 300) return void accepted.push({ sentAt, answeredAt: Date.now() });
        await sleep(100);
      }
    });
    // Killed with deliveries in flight, handlers running and jobs waiting.
    await expect.poll(() => accepted.length, { timeout: 30_000, interval: 10 }).toBeGreaterThan(40);
    const waiting = accepted.length - runs.size;
    await redis.crash();
    const stoppedAt = Date.now();
    await sleep(1500);
    const restartingAt = Date.now();
    await redis.start();
    await Promise.all(sending);

    // A request sent once Redis was gone and answered before it came back never got a 2xx.
    const during = accepted.filter(
      ({ sentAt, answeredAt }) => sentAt > stoppedAt && answeredAt < restartingAt,
    );
    expect(during).toEqual([]);
    expect(waiting).toBeGreaterThan(0);
    // Every accepted event is processed (none lost with the crash), and none twice.
    const ids = deliveries.map((delivery) => delivery.event.id);
    await expect
      .poll(() => ids.filter((id) => !runs.has(id)).length, { timeout: 60_000, interval: 100 })
      .toBe(0);
    expect([...runs].filter(([, count]) => count !== 1)).toEqual([]);
    // And every one is done for the sender: a copy of each is answered 200 duplicate, never run again.
    const check = connectRedis(redis.url);
    await expect
      .poll(
        async () => (await check.mget(ids.map((id) => `wfwh:${id}`))).filter((v) => v !== 'done').length,
        {
          timeout: 30_000,
          interval: 100,
        },
      )
      .toBe(0);
    const copies = await Promise.all(deliveries.map((delivery) => served.post(delivery)));
    expect(new Set(copies.map((answer) => `${answer.status} ${answer.body}`))).toEqual(
      new Set(['200 {"received":true,"duplicate":true}']),
    );
  });
});
