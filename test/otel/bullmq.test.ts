// With BullMQ, the trace link travels in the job: an attempt run by another instance links back to the delivery.
import { afterEach, describe, expect, it } from 'vitest';
import { createReceiver, type Receiver } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { METRICS } from 'workforce-webhooks/otel';
import { createRedisStore } from 'workforce-webhooks/redis';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';
import { createTestSdk, SpanStatusCode, type TestSdk, until } from './sdk.js';

const secret = 'whsec_otel_bullmq_test';

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
