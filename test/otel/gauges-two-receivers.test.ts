// Two receivers, each given its own otelTelemetry() on one meter provider (two endpoints of one app): the queue gauges
// count the jobs and dead letters of both, as the counters do.
import type { MeterProvider } from '@opentelemetry/api';
import { afterEach, expect, it } from 'vitest';
import { createMemoryQueue, createReceiver, type Receiver } from 'workforce-webhooks';
import { METRICS, otelTelemetry } from 'workforce-webhooks/otel';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { createTestSdk, type TestSdk } from './sdk.js';

const secret = 'whsec_otel_two_receivers_test';

let sdk: TestSdk;
const receivers: Receiver[] = [];
afterEach(async () => {
  for (const receiver of receivers.splice(0)) await receiver.close({ timeoutMs: 200 });
  await sdk?.shutdown();
});

it('sums the queue depth and the dead letters of every receiver on the meter', async () => {
  // The SDK's meter provider itself, as an app passes it: each receiver makes its own otelTelemetry() of it.
  let meterProvider!: MeterProvider;
  sdk = createTestSdk({
    meterProvider: (real) => {
      meterProvider = real;
      return real;
    },
  });
  let release!: () => void;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const make = (handler: () => unknown) => {
    const receiver = createReceiver({
      secret,
      logger: false,
      telemetry: otelTelemetry({ meterProvider }),
      queue: createMemoryQueue({ attempts: 1 }),
    }).on('leave.approved', handler);
    receivers.push(receiver);
    return receiver;
  };
  const failing = make(() => {
    throw new Error('fails');
  });
  const holding = make(() => held);
  const send = async (receiver: Receiver) => {
    const signed = await createSignedDelivery({ secret, type: 'leave.approved' });
    return receiver.handle({
      method: 'POST',
      headers: signed.headers,
      body: new TextEncoder().encode(signed.body),
    });
  };
  await (await send(failing)).background;
  await (await send(failing)).background;
  const running = await send(holding);
  expect(running.status).toBe(202);
  expect(await sdk.count(METRICS.deliveries, { outcome: 'accepted' })).toBe(3);
  expect({
    depth: await sdk.count(METRICS.queueDepth),
    deadLetters: await sdk.count(METRICS.deadLetters),
  }).toEqual({ depth: 1, deadLetters: 2 });
  release();
  await running.background;
});
