// An SDK registered after the receiver was made (ESM evaluates the receiver's module before the line that starts the
// SDK) reads the queue gauges without waiting for a delivery: dead letters kept from before are seen at once.
import { metrics } from '@opentelemetry/api';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { afterEach, expect, it } from 'vitest';
import { createMemoryQueue, createReceiver, type DeadLetter } from 'workforce-webhooks';
import { METRICS, otelTelemetry } from 'workforce-webhooks/otel';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { until } from './sdk.js';

const secret = 'whsec_otel_late_sdk_gauges_test';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  metrics.disable();
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

it('an SDK registered after the receiver, with no delivery since, reports the queue depth and the dead letters', async () => {
  const telemetry = otelTelemetry();
  const letters: DeadLetter[] = [];
  const receiver = createReceiver({
    secret,
    logger: false,
    telemetry,
    queue: createMemoryQueue({ attempts: 1 }),
    onDeadLetter: (letter) => void letters.push(letter),
  }).on('leave.approved', () => {
    throw new Error('fails');
  });
  cleanups.push(() => receiver.close({ timeoutMs: 200 }));
  // A dead letter kept before the SDK starts (on BullMQ or Postgres: one from before a restart).
  const signed = await createSignedDelivery({ secret, type: 'leave.approved' });
  const answer = await receiver.handle({
    method: 'POST',
    headers: signed.headers,
    body: new TextEncoder().encode(signed.body),
  });
  await answer.background;
  expect(letters).toHaveLength(1);

  // What NodeSDK.start() does; no delivery comes after it.
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  cleanups.push(() => meterProvider.shutdown());
  expect(metrics.setGlobalMeterProvider(meterProvider)).toBe(true);

  const gauges = async () => {
    await reader.forceFlush();
    const seen = new Map<string, unknown>();
    for (const scope of exporter.getMetrics().at(-1)?.scopeMetrics ?? [])
      for (const metric of scope.metrics) seen.set(metric.descriptor.name, metric.dataPoints[0]?.value);
    exporter.reset();
    return { depth: seen.get(METRICS.queueDepth), deadLetters: seen.get(METRICS.deadLetters) };
  };
  let last: Awaited<ReturnType<typeof gauges>> | undefined;
  await until(async () => {
    last = await gauges();
    return last.deadLetters !== undefined;
  }, 'the queue gauges').catch(() => {});
  expect(last).toEqual({ depth: 0, deadLetters: 1 });
});
