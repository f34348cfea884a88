// Ordering on the Redis store when Redis is alive but silent (SIGSTOP) just as an ordered event's handlers end: its
// watermark write misses the receiver's store deadline and is tried again in the background, so the event counts as
// processed (not retried, not dead-lettered) and its watermark lands once Redis answers; a dead letter's key step
// does not keep onDeadLetter waiting for Redis either.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryQueue, createReceiver, type DeadLetter } from 'workforce-webhooks';
import { createRedisStore } from 'workforce-webhooks/redis';
import { createSignedDelivery, sampleEventData } from 'workforce-webhooks/testing';
import { markOf } from '../../src/ordering-mark.js';
import { connectRedis, redisUrl } from '../setup/redis-helpers.js';
import { hasRedisServer, type RedisServer, startRedisServer } from '../setup/redis-server.js';
import { recordingLogger } from '../support/logger.js';
import { until } from '../support/ordering-scenario.js';

const secret = 'whsec_ordering_silent_redis';
const encoder = new TextEncoder();
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const startServer = async (): Promise<RedisServer> => {
  const server = await startRedisServer();
  // The server resumed before it is stopped, whatever a failing test left.
  cleanups.push(async () => {
    server.resume();
    await server.dispose();
  });
  return server;
};

const leaveOf = (leaveRequestId: string, occurredAt: string) =>
  createSignedDelivery({
    secret,
    type: 'leave.approved',
    data: { ...sampleEventData('leave.approved'), leaveRequestId },
    occurredAt,
  });

describe.skipIf(!redisUrl || !hasRedisServer())('ordering on a Redis that stops answering', () => {
  it('counts an event whose handlers succeeded as processed when its watermark write hangs, and writes the watermark once Redis answers', {
    timeout: 90_000,
  }, async () => {
    const server = await startServer();
    const store = createRedisStore({ client: connectRedis(server.url) });
    const logger = recordingLogger();
    const letters: DeadLetter[] = [];
    // One attempt, with a time limit well past the store deadline (2 s by default): an attempt that waited for the
    // watermark write would end on its time limit and be dead-lettered.
    const receiver = createReceiver({
      secret,
      store,
      logger,
      queue: createMemoryQueue({ attempts: 1, handlerTimeoutMs: 6000 }),
      ordering: {},
      onDeadLetter: (letter) => void letters.push(letter),
    });
    cleanups.push(() => receiver.close({ timeoutMs: 5000 }));
    const leaveRequestId = crypto.randomUUID();
    const newer = await leaveOf(leaveRequestId, '2026-11-20T10:00:00.000Z');
    const older = await leaveOf(leaveRequestId, '2026-11-20T09:00:00.000Z');
    const ran: string[] = [];
    let paused = false;
    receiver.on('leave.approved', (event) => {
      ran.push(event.id);
      // Redis goes silent just as the handlers end: the watermark write that follows gets no answer.
      if (event.id === newer.event.id) {
        server.pause();
        paused = true;
      }
    });
    const post = (delivery: typeof newer) =>
      receiver.handle({ method: 'POST', headers: delivery.headers, body: encoder.encode(delivery.body) });
    expect((await post(newer)).status).toBe(202);
    await until(() => paused, 'the handler');
    // Silent for twice the attempt's time limit.
    await sleep(12_000);
    server.resume();
    const admin = connectRedis(server.url);
    let watermark: string | undefined;
    for (const end = Date.now() + 20_000; watermark === undefined && Date.now() < end; ) {
      watermark = await store.ordering!.watermark(leaveRequestId);
      if (watermark === undefined) await sleep(50);
    }
    expect(watermark).toBe(markOf(newer.event));
    expect(await admin.exists(`wfwh:lease:{${leaveRequestId}}`)).toBe(0);
    // The older event arrives after: stale, not run over the newer one.
    const answer = await post(older);
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ received: true, stale: true });
    await receiver.close({ timeoutMs: 5000 });
    expect(ran).toEqual([newer.event.id]);
    expect(letters).toEqual([]);
    expect((await receiver.deadLetters()).items).toEqual([]);
    // Logged as a refused write tried again, with no body byte.
    const given = logger.lines.filter(
      (line) => line.msg === 'workforce-webhooks: could not give up an ordering key',
    );
    expect(given.length).toBeGreaterThan(0);
    expect(JSON.stringify(logger.lines)).not.toContain(newer.body);
  });

  it('calls onDeadLetter while Redis is still silent: giving up the dead letter’s key waits no longer than the store deadline', {
    timeout: 90_000,
  }, async () => {
    const server = await startServer();
    const store = createRedisStore({ client: connectRedis(server.url) });
    const letters: DeadLetter[] = [];
    const receiver = createReceiver({
      secret,
      store,
      logger: false,
      queue: createMemoryQueue({ attempts: 1, handlerTimeoutMs: 60_000 }),
      ordering: {},
      onDeadLetter: (letter) => void letters.push(letter),
    });
    cleanups.push(() => receiver.close({ timeoutMs: 5000 }));
    const delivery = await leaveOf(crypto.randomUUID(), '2026-11-20T10:00:00.000Z');
    receiver.on('leave.approved', () => {
      // Redis goes silent as the only attempt fails: the dead letter then gives the event's key up.
      server.pause();
      throw new Error('the record cannot be updated');
    });
    expect(
      (
        await receiver.handle({
          method: 'POST',
          headers: delivery.headers,
          body: encoder.encode(delivery.body),
        })
      ).status,
    ).toBe(202);
    // A wide bound on a hang: Redis stays silent far longer than the store deadline.
    await until(() => letters.length === 1, 'the dead letter', 30_000);
    server.resume();
    expect(letters.map((letter) => letter.event.id)).toEqual([delivery.event.id]);
  });

  it('gives up a key entry that lands after its deadline, so the event’s next attempt runs soon after Redis answers, not a lease later', {
    timeout: 120_000,
  }, async () => {
    const server = await startServer();
    const store = createRedisStore({ client: connectRedis(server.url) });
    // A lease far longer than the wait allowed below: an entry left to its lease would hold the key past it.
    const receiver = createReceiver({
      secret,
      store,
      logger: false,
      leaseMs: 300_000,
      queue: createMemoryQueue({ concurrency: 1, attempts: 50, backoff: () => 200 }),
      ordering: {},
    });
    cleanups.push(() => receiver.close({ timeoutMs: 5000 }));
    const ordered = await leaveOf(crypto.randomUUID(), '2026-11-20T10:00:00.000Z');
    // An event of no record, run first: it silences Redis once the ordered event is accepted and queued behind it.
    const first = await createSignedDelivery({ secret, type: 'employee.created' });
    let accepted!: () => void;
    const queued = new Promise<void>((resolve) => {
      accepted = resolve;
    });
    receiver.on('employee.created', async () => {
      await queued;
      server.pause();
    });
    const ran: number[] = [];
    receiver.on('leave.approved', (_event, ctx) => void ran.push(ctx.attempt));
    const post = (delivery: { headers: Record<string, string>; body: string }) =>
      receiver.handle({ method: 'POST', headers: delivery.headers, body: encoder.encode(delivery.body) });
    expect((await post(first)).status).toBe(202);
    expect((await post(ordered)).status).toBe(202);
    accepted();
    // Its key entries get no answer for a while: each attempt fails on the store deadline.
    await sleep(8000);
    server.resume();
    // A wide bound on a hang, far below the lease.
    await until(() => ran.length === 1, 'the ordered event', 60_000);
    expect(ran[0]).toBeGreaterThan(1);
  });

  it('counts a lease renewal that gets no answer within the store deadline as a failed renewal, logged while Redis is silent', {
    timeout: 90_000,
  }, async () => {
    const server = await startServer();
    const store = createRedisStore({ client: connectRedis(server.url) });
    const logger = recordingLogger();
    const receiver = createReceiver({ secret, store, logger, leaseMs: 1500, ordering: {} });
    cleanups.push(() => receiver.close({ timeoutMs: 5000 }));
    const delivery = await leaveOf(crypto.randomUUID(), '2026-11-20T10:00:00.000Z');
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => {
      finish = resolve;
    });
    let running = false;
    let ran = 0;
    receiver.on('leave.approved', async () => {
      running = true;
      await finished;
      ran++;
    });
    expect(
      (
        await receiver.handle({
          method: 'POST',
          headers: delivery.headers,
          body: encoder.encode(delivery.body),
        })
      ).status,
    ).toBe(202);
    await until(() => running, 'the handler');
    server.pause();
    const failedRenewal = () =>
      logger.lines.some((line) => line.msg === 'workforce-webhooks: ordering lease renewal failed');
    // A wide bound on a hang: Redis stays silent far longer than the store deadline.
    try {
      await until(failedRenewal, 'a failed renewal', 30_000);
    } finally {
      server.resume();
    }
    const warned = logger.lines.find(
      (line) => line.msg === 'workforce-webhooks: ordering lease renewal failed',
    );
    expect((warned?.obj.err as { code?: string } | undefined)?.code).toBe('store_unavailable');
    finish();
    await until(() => ran === 1, 'the handler to end');
    await receiver.close({ timeoutMs: 5000 });
    expect(ran).toBe(1);
  });
});
