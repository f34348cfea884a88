// With BullMQ, the trace link travels in the job: an attempt run by another instance links back to the delivery. Every
// attempt is counted once, by what followed it: an inline run handed over, an attempt whose lock is lost; and a replay
// that lands after its deadline is still counted.
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryStore, createReceiver, type DeadLetter, type Receiver } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { METRICS } from 'workforce-webhooks/otel';
import { createRedisStore } from 'workforce-webhooks/redis';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';
import { startRedisServer } from '../setup/redis-server.js';
import { createTestSdk, observations, SpanStatusCode, type TestSdk, until } from './sdk.js';

const secret = 'whsec_otel_bullmq_test';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function send(receiver: Receiver) {
  const signed = await createSignedDelivery({ secret, type: 'leave.approved' });
  const answer = await receiver.handle({
    method: 'POST',
    headers: signed.headers,
    body: new TextEncoder().encode(signed.body),
  });
  return { answer, event: signed.event };
}

// What the attempts counter must agree with.
const tally = async (sdk: TestSdk) => ({
  spans: sdk.spans().filter((span) => span.name.startsWith('process')).length,
  durations: observations(await sdk.points(METRICS.handlerDuration)),
  attempts: await sdk.count(METRICS.attempts),
});

const open: { receiver: Receiver; sdk: TestSdk }[] = [];
afterEach(async () => {
  await Promise.all(
    open.splice(0).map(async ({ receiver, sdk }) => {
      await receiver.close({ timeoutMs: 2000 });
      await sdk.shutdown();
    }),
  );
});

describe.skipIf(!redisUrl)('otelTelemetry with BullMQ', () => {
  it('links an attempt on a second instance to the delivery accepted on the first', async () => {
    const name = uniqueName('otel');
    const prefix = `${uniqueName('otel-store')}:`;
    // Each instance has its own SDK, as two processes would: they share only Redis.
    const instance = (handler: () => void) => {
      const sdk = createTestSdk();
      const receiver = createReceiver({
        secret,
        logger: false,
        telemetry: sdk.telemetry,
        store: createRedisStore({ client: connectRedis(), prefix }),
        queue: createBullmqQueue({ connection: redisUrl, name, attempts: 2, backoff: () => 300 }),
      }).on('leave.approved', handler);
      open.push({ receiver, sdk });
      return { receiver, sdk };
    };
    const first = instance(() => {
      throw new RangeError('the first instance fails its attempt');
    });
    const signed = await createSignedDelivery({ secret, type: 'leave.approved' });
    const answer = await first.receiver.handle({
      method: 'POST',
      headers: signed.headers,
      body: new TextEncoder().encode(signed.body),
    });
    expect(answer.status).toBe(202);
    // The first instance runs attempt 1 and fails it; it then stops, so attempt 2 can only run elsewhere.
    await until(
      async () => (await first.sdk.count(METRICS.attempts, { outcome: 'retry' })) === 1,
      'the retry',
    );
    await first.receiver.close();
    const second = instance(() => {});
    await until(
      () => second.sdk.spans().some((span) => span.name === 'process leave.approved'),
      'the second instance’s attempt',
    );

    const receive = first.sdk.spans().find((span) => span.name === 'receive leave.approved')!;
    expect(receive.attributes).toMatchObject({
      'messaging.message.id': signed.event.id,
      'workforce.outcome': 'accepted',
      'http.response.status_code': 202,
    });
    const failed = first.sdk.spans().find((span) => span.name === 'process leave.approved')!;
    expect(failed.attributes['error.type']).toBe('RangeError');
    const processed = second.sdk.spans().find((span) => span.name === 'process leave.approved')!;
    expect(processed.attributes).toMatchObject({
      'messaging.system': 'workforce',
      'messaging.operation.type': 'process',
      'messaging.message.id': signed.event.id,
      'messaging.destination.name': 'leave.approved',
      'workforce.delivery.id': signed.headers['svc-delivery-id'],
      'workforce.attempt': 2,
    });
    expect(processed.status.code).toBe(SpanStatusCode.UNSET);
    for (const span of [failed, processed]) {
      expect(span.links).toHaveLength(1);
      expect(span.links[0]!.context.traceId).toBe(receive.spanContext().traceId);
      expect(span.links[0]!.context.spanId).toBe(receive.spanContext().spanId);
    }
    expect(await second.sdk.count(METRICS.attempts, { outcome: 'success' })).toBe(1);
    expect(await second.sdk.count(METRICS.queueDepth)).toBe(0);
    expect(await second.sdk.count(METRICS.deadLetters)).toBe(0);
  });

  it('counts BullMQ dead letters and the queue depth from Redis', async () => {
    const sdk = createTestSdk();
    const receiver = createReceiver({
      secret,
      logger: false,
      telemetry: sdk.telemetry,
      store: createRedisStore({ client: connectRedis(), prefix: `${uniqueName('otel-store')}:` }),
      queue: createBullmqQueue({ connection: redisUrl, name: uniqueName('otel'), attempts: 1 }),
    }).on('leave.approved', () => {
      throw new Error('no');
    });
    open.push({ receiver, sdk });
    for (let i = 0; i < 3; i++) {
      const signed = await createSignedDelivery({ secret, type: 'leave.approved' });
      await receiver.handle({
        method: 'POST',
        headers: signed.headers,
        body: new TextEncoder().encode(signed.body),
      });
    }
    await until(async () => (await sdk.count(METRICS.deadLetters)) === 3, 'three dead letters');
    expect(await sdk.count(METRICS.attempts, { outcome: 'dead_letter' })).toBe(3);
    expect(await sdk.count(METRICS.queueDepth)).toBe(0);
  });
});

describe.skipIf(!redisUrl)('an inline run handed over to BullMQ', () => {
  const instance = (attempts: number, handler: () => unknown, letters: DeadLetter[]) => {
    const sdk = createTestSdk();
    const receiver = createReceiver({
      secret,
      logger: false,
      telemetry: sdk.telemetry,
      mode: 'inline',
      ackDeadlineMs: 20,
      store: createRedisStore({ client: connectRedis(), prefix: `${uniqueName('otel-store')}:` }),
      queue: createBullmqQueue({
        connection: redisUrl,
        name: uniqueName('otel'),
        attempts,
        backoff: () => 50,
      }),
      onDeadLetter: (letter) => void letters.push(letter),
    }).on('leave.approved', handler as never);
    open.push({ receiver, sdk });
    return { receiver, sdk };
  };

  it('attempts: 1, failing after its 202: one attempt, counted once as the dead letter', async () => {
    const letters: DeadLetter[] = [];
    const { receiver, sdk } = instance(
      1,
      async () => {
        await sleep(60);
        throw new TypeError('fails after the 202');
      },
      letters,
    );
    expect((await send(receiver)).answer.status).toBe(202);
    await until(() => letters.length === 1, 'the dead letter');
    expect(letters[0]!.attempts).toBe(1);
    expect(await tally(sdk)).toEqual({ spans: 1, durations: 1, attempts: 1 });
    expect(await sdk.count(METRICS.attempts, { outcome: 'dead_letter' })).toBe(1);
  });

  it('attempts: 2, the inline run and its queued retry fail: a retry and a dead letter, spans numbered 1 and 2', async () => {
    const letters: DeadLetter[] = [];
    const { receiver, sdk } = instance(
      2,
      async () => {
        await sleep(60);
        throw new TypeError('fails');
      },
      letters,
    );
    expect((await send(receiver)).answer.status).toBe(202);
    await until(() => letters.length === 1, 'the dead letter');
    expect(letters[0]!.attempts).toBe(2);
    const processes = sdk.spans().filter((span) => span.name.startsWith('process'));
    expect(processes.map((span) => span.attributes['workforce.attempt'])).toEqual([1, 2]);
    expect(await tally(sdk)).toEqual({ spans: 2, durations: 2, attempts: 2 });
    expect(await sdk.count(METRICS.attempts, { outcome: 'retry' })).toBe(1);
    expect(await sdk.count(METRICS.attempts, { outcome: 'dead_letter' })).toBe(1);
  });

  it('its letter replayed: a replay, not a delivery; attempts start again at 1, linked to the receive span', async () => {
    const letters: DeadLetter[] = [];
    let fail = true;
    const { receiver, sdk } = instance(
      2,
      async () => {
        await sleep(60);
        if (fail) throw new TypeError('fails until replayed');
      },
      letters,
    );
    expect((await send(receiver)).answer.status).toBe(202);
    await until(() => letters.length === 1, 'the dead letter');
    fail = false;
    expect(await receiver.replay(letters[0]!.event.id)).toBe(true);
    await until(async () => (await sdk.count(METRICS.attempts, { outcome: 'success' })) === 1, 'its success');
    const receive = sdk.spans().find((span) => span.name.startsWith('receive'))!;
    const processes = sdk.spans().filter((span) => span.name.startsWith('process'));
    expect(processes.map((span) => span.attributes['workforce.attempt'])).toEqual([1, 2, 1]);
    for (const span of processes) expect(span.links[0]!.context.spanId).toBe(receive.spanContext().spanId);
    expect(await sdk.count(METRICS.replays)).toBe(1);
    expect(await sdk.count(METRICS.deliveries)).toBe(1);
    expect(await tally(sdk)).toEqual({ spans: 3, durations: 3, attempts: 3 });
  });
});

describe.skipIf(!redisUrl)('BullMQ attempts cut short, replays landing late', () => {
  it('an attempt whose lock is lost is counted (a retry), and so is the run that follows it', async () => {
    const name = uniqueName('otel-lock');
    const sdk = createTestSdk();
    let calls = 0;
    let started!: () => void;
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    const receiver = createReceiver({
      secret,
      logger: false,
      telemetry: sdk.telemetry,
      store: createRedisStore({ client: connectRedis(), prefix: `${name}-store:` }),
      queue: createBullmqQueue({
        connection: redisUrl,
        name,
        attempts: 3,
        backoff: () => 50,
        lockDurationMs: 1000,
        lockRenewMs: 100,
        stalledIntervalMs: 200,
      }),
    }).on('leave.approved', async (_event, ctx) => {
      calls++;
      if (calls > 1) return;
      started();
      // Stops when its signal says the lock is lost, as a handler should.
      await new Promise<void>((_, reject) =>
        ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true }),
      );
    });
    open.push({ receiver, sdk });
    const { answer, event } = await send(receiver);
    expect(answer.status).toBe(202);
    await running;
    // The lock goes, as when the event loop is blocked past it: the next renewal fails and aborts the attempt.
    const redis = connectRedis();
    await redis.del(`bull:${name}:${event.id}:lock`);
    redis.disconnect();
    await until(
      async () => (await sdk.count(METRICS.attempts, { outcome: 'success' })) === 1,
      'the next run',
    );
    const processes = sdk.spans().filter((span) => span.name.startsWith('process'));
    expect(calls).toBe(2);
    expect(processes.map((span) => span.status.code)).toEqual([SpanStatusCode.ERROR, SpanStatusCode.UNSET]);
    expect(await tally(sdk)).toEqual({ spans: 2, durations: 2, attempts: 2 });
    expect(await sdk.count(METRICS.attempts, { outcome: 'retry' })).toBe(1);
  });

  it('a replay refused at its deadline (queue_unavailable) that lands later is counted in replays', {
    timeout: 60_000,
  }, async ({ onTestFinished }) => {
    const server = await startRedisServer();
    onTestFinished(async () => {
      server.resume();
      await server.dispose();
    });
    const sdk = createTestSdk();
    const letters: DeadLetter[] = [];
    let fail = true;
    let runs = 0;
    const receiver = createReceiver({
      secret,
      logger: false,
      telemetry: sdk.telemetry,
      store: createMemoryStore(),
      queue: createBullmqQueue({ connection: server.url, name: uniqueName('otel-late-replay'), attempts: 1 }),
      onDeadLetter: (letter) => void letters.push(letter),
    }).on('leave.approved', () => {
      runs++;
      if (fail) throw new Error('fails until replayed');
    });
    open.push({ receiver, sdk });
    const { answer, event } = await send(receiver);
    expect(answer.status).toBe(202);
    await until(() => letters.length === 1, 'the dead letter');
    fail = false;
    // Redis stops answering: the replay is refused at its deadline, its commands held by the silent server.
    server.pause();
    const replaying = receiver.replay(event.id).then(
      (value) => ({ value }),
      (error: { code?: string }) => ({ error: error.code }),
    );
    expect(await replaying).toEqual({ error: 'queue_unavailable' });
    expect(await sdk.count(METRICS.replays)).toBe(0);
    server.resume();
    // It lands: the letter is queued again and runs, and the replay is counted then.
    await until(() => runs === 2, 'the replayed run');
    await until(async () => (await sdk.count(METRICS.attempts, { outcome: 'success' })) === 1, 'its success');
    expect(await sdk.count(METRICS.replays)).toBe(1);
  });
});
