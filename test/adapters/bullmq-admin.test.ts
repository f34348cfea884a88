// The BullMQ queue's admin calls on a Redis that stops answering (SIGSTOP: alive, its connections open, silent):
// refused with queue_unavailable at their deadline, the wait for a connection included; answered when it is slow.
import { Redis } from 'ioredis';
import { describe, it, type TestContext } from 'vitest';
import { type BulkProgress, HandlerFailure, replayDeadLetters, silentLogger } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { ADMIN_TIMEOUT_MS } from '../../adapters/bullmq-admin.js';
import { queuedEvent } from '../contract/queue-suite.js';
import { uniqueName } from '../setup/redis-helpers.js';
import { hasRedisServer, type RedisServer, startRedisServer } from '../setup/redis-server.js';

// The error code each call rejected with, 'answered', or 'hung' when it had done neither `ms` after the first began.
async function outcomes(calls: readonly Promise<unknown>[], ms: number): Promise<string[]> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const bound = new Promise<string>((resolve) => {
    timer = setTimeout(resolve, ms, 'hung');
  });
  const settled = await Promise.all(
    calls.map((call) =>
      Promise.race([
        call.then(
          () => 'answered',
          (error: unknown) => String((error as { code?: unknown }).code ?? error),
        ),
        bound,
      ]),
    ),
  );
  clearTimeout(timer);
  return settled;
}

// A redis-server of the test's own, resumed and removed with the test.
async function ownRedis(onTestFinished: TestContext['onTestFinished']): Promise<RedisServer> {
  const server = await startRedisServer();
  onTestFinished(async () => {
    server.resume();
    await server.dispose();
  });
  return server;
}

// A started queue on `server` holding `count` dead letters (one by default), closed with the test.
async function queueWithDeadLetter(
  server: RedisServer,
  onTestFinished: TestContext['onTestFinished'],
  count = 1,
) {
  const queue = createBullmqQueue({ connection: server.url, name: uniqueName('admin'), attempts: 1 });
  onTestFinished(() => queue.close({ timeoutMs: 2000 }));
  let buried = 0;
  let allBuried!: () => void;
  const dead = new Promise<void>((resolve) => {
    allBuried = resolve;
  });
  queue.start({
    logger: silentLogger,
    process: async () => {
      throw new HandlerFailure([new TypeError('down')], []);
    },
    onDeadLetter: async () => {
      if (++buried === count) allBuried();
    },
  });
  const jobs = Array.from({ length: count }, () => queuedEvent());
  for (const job of jobs) await queue.enqueue(job);
  await dead;
  return { queue, eventId: jobs[0]!.event.id };
}

describe.skipIf(!hasRedisServer())('BullMQ admin calls on a silent Redis', { concurrent: true }, () => {
  it('refuses deadLetters, discard and counts with queue_unavailable once their deadline passes', {
    timeout: 60_000,
  }, async ({ expect, onTestFinished }) => {
    const server = await ownRedis(onTestFinished);
    const { queue, eventId } = await queueWithDeadLetter(server, onTestFinished);
    server.pause();
    const started = performance.now();
    const calls = [queue.deadLetters(), queue.discard(eventId), queue.counts!(), queue.replay(eventId)];
    expect(await outcomes(calls, ADMIN_TIMEOUT_MS + 5000)).toEqual([
      'queue_unavailable',
      'queue_unavailable',
      'queue_unavailable',
      'queue_unavailable',
    ]);
    expect(performance.now() - started).toBeGreaterThanOrEqual(ADMIN_TIMEOUT_MS - 100);
  });

  it('stops a bulk replay at the first letter Redis leaves unanswered, rather than waiting out each one left', {
    timeout: 90_000,
  }, async ({ expect, onTestFinished }) => {
    const server = await ownRedis(onTestFinished);
    const { queue } = await queueWithDeadLetter(server, onTestFinished, 4);
    const seen: BulkProgress[] = [];
    const replaying = replayDeadLetters(
      queue,
      {},
      {
        concurrency: 1,
        onProgress: (progress) => {
          seen.push(progress);
          if (progress.done === 1) server.pause(); // Redis stops answering after the first letter
        },
      },
    );
    expect(await outcomes([replaying], 2 * ADMIN_TIMEOUT_MS + 5000)).toEqual(['queue_unavailable']);
    // The first replayed, the second refused at its deadline, the two left never started: they stay dead letters.
    expect(seen.at(-1)).toEqual({ done: 2, succeeded: 1, failed: 1, skipped: 0 });
  });

  it('bounds the wait for a connection: a queue made while Redis is silent refuses at the deadline', {
    timeout: 60_000,
  }, async ({ expect, onTestFinished }) => {
    const server = await ownRedis(onTestFinished);
    server.pause();
    // As the dead-letters command makes it: never started, only read and written.
    const queue = createBullmqQueue({ connection: server.url, name: uniqueName('admin') });
    onTestFinished(() => queue.close({ timeoutMs: 1000 }));
    const calls = [queue.deadLetters(), queue.discard(crypto.randomUUID()), queue.counts!()];
    expect(await outcomes(calls, ADMIN_TIMEOUT_MS + 5000)).toEqual([
      'queue_unavailable',
      'queue_unavailable',
      'queue_unavailable',
    ]);
  });

  it('answers a Redis that is only slow: silent for 2 s, well within the deadline', {
    timeout: 60_000,
  }, async ({ expect, onTestFinished }) => {
    const server = await ownRedis(onTestFinished);
    const { queue, eventId } = await queueWithDeadLetter(server, onTestFinished);
    server.pause();
    setTimeout(() => server.resume(), 2000);
    const page = await queue.deadLetters();
    expect(page.items.map((letter) => letter.event.id)).toEqual([eventId]);
    expect(await queue.discard(eventId)).toBe(true);
  });
});

describe.skipIf(!hasRedisServer())('BullMQ admin calls on a Redis out of memory', () => {
  it('refuses a replay with queue_unavailable naming the cause, stops a bulk replay at the first, and replays once there is room', {
    timeout: 60_000,
  }, async ({ expect, onTestFinished }) => {
    const server = await ownRedis(onTestFinished);
    const { queue, eventId } = await queueWithDeadLetter(server, onTestFinished, 3);
    const admin = new Redis(server.url);
    onTestFinished(() => void admin.disconnect());
    await admin.config('SET', 'maxmemory-policy', 'noeviction');
    await admin.config('SET', 'maxmemory', '1');
    await expect(queue.replay(eventId)).rejects.toMatchObject({
      code: 'queue_unavailable',
      message: expect.stringContaining('out of memory'),
    });
    // Reading still works: the letters are listed, and the bulk replay stops at its first refusal.
    expect((await queue.deadLetters()).items).toHaveLength(3);
    const seen: BulkProgress[] = [];
    await expect(
      replayDeadLetters(queue, {}, { concurrency: 1, onProgress: (progress) => void seen.push(progress) }),
    ).rejects.toMatchObject({ code: 'queue_unavailable' });
    expect(seen.at(-1)).toEqual({ done: 1, succeeded: 0, failed: 1, skipped: 0 });
    await admin.config('SET', 'maxmemory', '0');
    expect(await queue.replay(eventId)).toBe(true);
  });
});
