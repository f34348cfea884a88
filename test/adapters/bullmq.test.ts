// The BullMQ queue on a real redis-server: stored before the 202, one job per event, connections, retention, outages.
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createMemoryStore,
  createReceiver,
  type EventQueue,
  type Receiver,
  silentLogger,
} from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createRedisStore } from 'workforce-webhooks/redis';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { queuedEvent } from '../contract/queue-suite.js';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';
import { hasRedisServer, type RedisServer, startRedisServer } from '../setup/redis-server.js';

const secret = 'whsec_bullmq_queue_test';
const encoder = new TextEncoder();

const toClose: { close(options?: { timeoutMs?: number }): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(toClose.splice(0).map((each) => each.close({ timeoutMs: 2000 })));
});

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

async function deliver(receiver: Receiver, id: string = crypto.randomUUID()) {
  const delivery = await createSignedDelivery({ secret, type: 'leave.approved', id });
  return receiver.handle({ method: 'POST', headers: delivery.headers, body: encoder.encode(delivery.body) });
}

async function unusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe.skipIf(!redisUrl)('createBullmqQueue', () => {
  it('answers 202 only once the job, with the event id as its id, is stored in Redis', async () => {
    const name = uniqueName('stored');
    const gate = deferred();
    let runs = 0;
    const receiver = createReceiver({
      secret,
      store: createRedisStore({ client: connectRedis(), prefix: `${name}:` }),
      queue: createBullmqQueue({ connection: connectRedis(), name }),
    }).on('leave.approved', async () => {
      runs++;
      await gate.promise;
    });
    toClose.push(receiver);
    const id = crypto.randomUUID();
    const answer = await deliver(receiver, id);
    expect(answer.status).toBe(202);
    // Checked with a plain client right after the answer: the job hash is there, holding the event.
    const raw = connectRedis();
    const stored = await raw.hget(`bull:${name}:${id}`, 'data');
    expect(JSON.parse(stored ?? 'null')?.event?.id).toBe(id);
    // The id is marked done right after the answer (the receiver does it as background work).
    await expect.poll(() => raw.get(`${name}:${id}`)).toBe('done');
    gate.resolve();
    await expect.poll(() => raw.zscore(`bull:${name}:completed`, id)).not.toBeNull();
    expect((await deliver(receiver, id)).status).toBe(200);
    expect(runs).toBe(1);
  });

  it('keeps one job per event: the same event enqueued on two instances runs once', async () => {
    const name = uniqueName('one-job');
    let runs = 0;
    const queues = [0, 1].map(() => createBullmqQueue({ connection: connectRedis(), name }));
    for (const queue of queues) {
      toClose.push(queue);
      queue.start({ logger: silentLogger, onDeadLetter: async () => {}, process: async () => void runs++ });
    }
    const job = queuedEvent();
    await Promise.all(queues.map((queue) => queue.enqueue(job)));
    await queues[0]!.enqueue(job);
    const raw = connectRedis();
    await expect.poll(() => raw.zscore(`bull:${name}:completed`, job.event.id)).not.toBeNull();
    await queues[1]!.enqueue(job); // completed jobs are kept: a late redelivery still finds it
    await expect.poll(() => raw.zscore(`bull:${name}:completed`, job.event.id)).not.toBeNull();
    expect(runs).toBe(1);
  });

  it('keeps completed jobs for the dedupe window and failed jobs until replayed', async () => {
    const name = uniqueName('retention');
    const queue = createBullmqQueue({
      connection: connectRedis(),
      name,
      attempts: 1,
      keepCompletedMs: 48 * 3600_000,
    });
    toClose.push(queue);
    const dead = deferred();
    queue.start({
      logger: silentLogger,
      onDeadLetter: async () => dead.resolve(),
      process: async (job) => {
        if (job.deliveryId === 'fail') throw new Error('down');
      },
    });
    const ok = queuedEvent();
    const failing = queuedEvent({ deliveryId: 'fail' });
    await queue.enqueue(ok);
    await queue.enqueue(failing);
    await dead.promise;
    const raw = connectRedis();
    const opts = JSON.parse((await raw.hget(`bull:${name}:${ok.event.id}`, 'opts')) ?? '{}');
    expect(opts.removeOnComplete).toEqual({ age: 48 * 3600 });
    expect(
      JSON.parse((await raw.hget(`bull:${name}:${failing.event.id}`, 'opts')) ?? '{}').removeOnFail,
    ).toBe(false);
    expect((await queue.deadLetters()).items.map((l) => l.event.id)).toEqual([failing.event.id]);
  });

  it('connects from a URL or from options, and never closes nor changes the client it was given', async () => {
    const client = connectRedis();
    const url = new URL(redisUrl);
    const forms = [redisUrl, { host: url.hostname, port: Number(url.port) }, client];
    for (const connection of forms) {
      const done = deferred();
      const queue = createBullmqQueue({ connection, name: uniqueName('forms') });
      queue.start({
        logger: silentLogger,
        onDeadLetter: async () => {},
        process: async () => done.resolve(),
      });
      await queue.enqueue(queuedEvent());
      await done.promise;
      await queue.close();
    }
    expect(client.status).toBe('ready');
    expect(client.options.maxRetriesPerRequest).toBe(1);
    expect(await client.ping()).toBe('PONG');
  });

  it('mixes freely with the memory parts', async () => {
    const name = uniqueName('mix');
    const runs: string[] = [];
    const receivers = [
      createReceiver({ secret, store: createRedisStore({ client: connectRedis(), prefix: `${name}:` }) }),
      createReceiver({
        secret,
        store: createMemoryStore(),
        queue: createBullmqQueue({ connection: redisUrl, name }),
      }),
    ];
    for (const [i, receiver] of receivers.entries()) {
      toClose.push(receiver);
      receiver.on('leave.approved', (event) => void runs.push(`${i}:${event.id}`));
    }
    const ids = [crypto.randomUUID(), crypto.randomUUID()];
    expect((await deliver(receivers[0]!, ids[0])).status).toBe(202);
    expect((await deliver(receivers[1]!, ids[1])).status).toBe(202);
    await expect.poll(() => runs.sort()).toEqual([`0:${ids[0]}`, `1:${ids[1]}`].sort());
  });

  it('refuses at once with 503 when Redis cannot be reached, and releases the claim', async () => {
    const queue: EventQueue = createBullmqQueue({ connection: `redis://127.0.0.1:${await unusedPort()}` });
    const receiver = createReceiver({ secret, store: createMemoryStore(), queue, logger: silentLogger });
    receiver.on('leave.approved', () => {});
    toClose.push(receiver);
    const id = crypto.randomUUID();
    for (let i = 0; i < 2; i++) {
      // The second answer is 503 again, not 409: the first delivery's claim was given back.
      const answer = await deliver(receiver, id);
      expect(answer.status).toBe(503);
      expect(JSON.parse(answer.body)).toEqual({ error: 'queue_unavailable' });
      expect(answer.headers['retry-after']).toBeDefined();
    }
  });

  it('lets many deliveries wait for the connecting producer on one shared wait (no listener warning)', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const queue = createBullmqQueue({ connection: redisUrl, name: uniqueName('connecting') });
      toClose.push(queue);
      queue.start({ logger: silentLogger, process: async () => {}, onDeadLetter: async () => {} });
      // Enqueued at once, while the producer is still connecting.
      const results = await Promise.all(Array.from({ length: 200 }, () => queue.enqueue(queuedEvent())));
      expect(results.every((result) => result.status === 'queued')).toBe(true);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((warning) => warning.name === 'MaxListenersExceededWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it("aborts an attempt's signal once its job lock is lost, so another instance may take it", async () => {
    const name = uniqueName('lock-lost');
    const started = deferred();
    let reason: unknown;
    const receiver = createReceiver({
      secret,
      store: createMemoryStore({ max: 100 }),
      // A short lock, renewed every third of it: the lost lock shows within a second.
      queue: createBullmqQueue({ connection: connectRedis(), name, lockDurationMs: 1000, attempts: 1 }),
      logger: silentLogger,
    }).on('leave.approved', (_event, ctx) => {
      started.resolve();
      return new Promise<void>((_resolve, reject) => {
        ctx.signal.addEventListener('abort', () => {
          reason = ctx.signal.reason;
          reject(ctx.signal.reason);
        });
      });
    });
    toClose.push(receiver);
    const id = crypto.randomUUID();
    expect((await deliver(receiver, id)).status).toBe(202);
    await started.promise;
    // What a stall looks like to this worker: its lock is gone (taken over, or expired while it was stuck).
    await connectRedis().del(`bull:${name}:${id}:lock`);
    await expect.poll(() => reason, { timeout: 10_000 }).toBeInstanceOf(Error);
    expect(String((reason as Error).message)).toMatch(/lock was lost/);
  });

  // README: "handlers that succeeded in an earlier attempt are kept on the job and skipped", also when the attempt
  // is cut short rather than failed by a handler.
  it('keeps a handler that succeeded on the job when its sibling passes handlerTimeoutMs: only the sibling runs again', async () => {
    const name = uniqueName('timeout-completed');
    const runs = { a: 0, b: 0 };
    const secondRun = deferred();
    const receiver = createReceiver({
      secret,
      logger: silentLogger,
      queue: createBullmqQueue({
        connection: connectRedis(),
        name,
        attempts: 3,
        backoff: () => 1,
        handlerTimeoutMs: 200,
      }),
    })
      .on('leave.approved', () => {
        runs.a++;
      })
      .on('leave.approved', async (_event, ctx) => {
        runs.b++;
        if (ctx.attempt > 1) return secondRun.resolve();
        await sleep(1000); // ignores its signal
      });
    toClose.push(receiver);
    const id = crypto.randomUUID();
    expect((await deliver(receiver, id)).status).toBe(202);
    await secondRun.promise;
    const raw = connectRedis();
    await expect.poll(() => raw.zscore(`bull:${name}:completed`, id)).not.toBeNull();
    expect(runs).toEqual({ a: 1, b: 2 });
    expect(JSON.parse((await raw.hget(`bull:${name}:${id}`, 'data')) ?? '{}').completed).toEqual([0]);
  });

  it('keeps a handler that succeeded on the job when close() cuts its sibling short: another instance runs only the sibling', async () => {
    const name = uniqueName('close-completed');
    const runs = { a: 0, b: 0 };
    const started = deferred();
    const rerun = deferred();
    const instance = () =>
      createReceiver({
        secret,
        logger: silentLogger,
        queue: createBullmqQueue({ connection: connectRedis(), name, attempts: 3, backoff: () => 1 }),
      })
        .on('leave.approved', () => {
          runs.a++;
        })
        .on('leave.approved', async (_event, ctx) => {
          runs.b++;
          if (ctx.attempt > 1) return rerun.resolve();
          started.resolve();
          // Runs until the shutdown aborts it.
          await new Promise((_resolve, reject) =>
            ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)),
          );
        });
    const first = instance();
    expect((await deliver(first, crypto.randomUUID())).status).toBe(202);
    await started.promise;
    await first.close({ timeoutMs: 1000 });
    const second = instance();
    toClose.push(second);
    await rerun.promise;
    expect(runs).toEqual({ a: 1, b: 2 });
  });

  it('refuses options it cannot work with', () => {
    expect(() => createBullmqQueue({} as never)).toThrow(/needs `connection`/);
    const lazy = new Redis(redisUrl, { lazyConnect: true });
    expect(() => createBullmqQueue({ connection: lazy, concurrency: 0 })).toThrow(/concurrency/);
    lazy.disconnect();
  });
});

// How long `promise` took to settle, or 'timeout' after `ms`.
async function timed(promise: Promise<unknown>, ms: number): Promise<number | 'timeout'> {
  const started = performance.now();
  const took = (): number => performance.now() - started;
  return Promise.race([promise.then(took, took), sleep(ms).then(() => 'timeout' as const)]);
}

describe.skipIf(!redisUrl)('the success record of a finished job', () => {
  // Written only when BullMQ has not confirmed the completion in time (a silent Redis: silent-redis.test.ts); a job
  // whose lock was renewed all along, however long it ran, costs nothing in Redis.
  it('is not written for a job completed in time, whether its handler returned at once or ran through renewals', async () => {
    const name = uniqueName('success-record');
    const slow = new Set<string>();
    const receiver = createReceiver({
      secret,
      store: createMemoryStore(),
      queue: createBullmqQueue({ connection: connectRedis(), name, lockDurationMs: 600, lockRenewMs: 200 }),
    }).on('leave.approved', async (event) => {
      if (slow.has(event.id)) await sleep(1500);
    });
    toClose.push(receiver);
    const raw = connectRedis();
    for (const runsLong of [false, true]) {
      const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
      const id = delivery.event.id;
      if (runsLong) slow.add(id);
      const body = encoder.encode(delivery.body);
      expect((await receiver.handle({ method: 'POST', headers: delivery.headers, body })).status).toBe(202);
      await expect.poll(() => raw.zscore(`bull:${name}:completed`, id), { timeout: 10_000 }).not.toBeNull();
      // Past the longest wait for a confirmation (half the lock), the record was never written.
      await sleep(400);
      expect(await raw.exists(`bull:${name}:${id}:succeeded`)).toBe(0);
    }
  });
});

describe.skipIf(!redisUrl || !hasRedisServer())('createBullmqQueue with a silent Redis', () => {
  // A server of the test's own, paused (SIGSTOP: alive, its connections open, silent) before the close.
  let redis: RedisServer | undefined;
  afterEach(async () => {
    redis?.resume();
    await redis?.dispose();
    redis = undefined;
  });

  for (const busy of [false, true]) {
    it(`closes within its timeoutMs while Redis is paused (${busy ? 'a handler running' : 'idle'})`, {
      timeout: 30_000,
    }, async () => {
      redis = await startRedisServer();
      let runs = 0;
      const receiver = createReceiver({
        secret,
        store: busy ? createMemoryStore() : createRedisStore({ client: connectRedis(redis.url) }),
        queue: createBullmqQueue({ connection: connectRedis(redis.url), name: uniqueName('silent-close') }),
        logger: silentLogger,
      }).on('leave.approved', async () => {
        runs++;
        if (busy) await sleep(300);
      });
      expect((await deliver(receiver)).status).toBe(202);
      await expect.poll(() => runs).toBe(1);
      redis.pause();
      const took = await timed(receiver.close({ timeoutMs: 1000 }), 10_000);
      expect(took).not.toBe('timeout');
      // One deadline for the whole close; a little slack for the timers.
      expect(took as number).toBeLessThan(1500);
    });
  }
});

describe.skipIf(!redisUrl)('discardDeadLetters on BullMQ, racing a replay', () => {
  it('leaves the newer failure of a letter another operator replayed after the discard listed it', async () => {
    const bullmq = createBullmqQueue({
      connection: connectRedis(),
      name: uniqueName('discard-race'),
      attempts: 1,
    });
    // The same queue; only its discard waits for a signal first, to order the race.
    const go = deferred();
    let listed!: (id: string) => void;
    const discarding = new Promise<string>((resolve) => {
      listed = resolve;
    });
    const queue: EventQueue = {
      ...bullmq,
      async discard(eventId, options) {
        listed(eventId);
        await go.promise;
        return bullmq.discard(eventId, options);
      },
    };
    let failures = 0;
    const receiver = createReceiver({ secret, store: createMemoryStore(), queue, logger: silentLogger }).on(
      'leave.approved',
      () => {
        failures++;
        throw new Error('down');
      },
    );
    toClose.push(receiver);
    const id = crypto.randomUUID();
    expect((await deliver(receiver, id)).status).toBe(202);
    await expect.poll(async () => (await receiver.deadLetters()).items.length).toBe(1);
    const until = (await receiver.deadLetters()).items[0]!.failedAt + 1;

    // Operator 1 drops every letter that failed before `until` (this one, as listed)...
    const dropping = receiver.discardDeadLetters({ until });
    expect(await discarding).toBe(id);
    // ...operator 2 meanwhile replays it, and it fails again, after `until`.
    expect(await receiver.replay(id)).toBe(true);
    await expect
      .poll(async () => (await receiver.deadLetters()).items[0]?.failedAt ?? 0)
      .toBeGreaterThan(until);
    go.resolve();
    expect(await dropping).toBe(0);
    expect(failures).toBe(2);
    expect((await receiver.deadLetters()).items.map((l) => l.event.id)).toEqual([id]);
  });
});
