// An app whose SDK registers after `otelTelemetry()` was called (ESM evaluates the receiver's module before the
// line that starts the SDK): the global providers it registers then get the spans and the metrics all the same.
import { metrics, trace } from '@opentelemetry/api';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterEach, expect, it } from 'vitest';
import { createReceiver } from 'workforce-webhooks';
import { METRICS, otelTelemetry } from 'workforce-webhooks/otel';
import { createSignedDelivery } from 'workforce-webhooks/testing';

const secret = 'whsec_otel_late_sdk_test';
const encoder = new TextEncoder();

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  metrics.disable();
  trace.disable();
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

it('an SDK registered after otelTelemetry() was made receives the deliveries and attempts metrics, and the spans', async () => {
  const telemetry = otelTelemetry();
  const receiver = createReceiver({ secret, logger: false, telemetry }).on('leave.approved', () => {});
  cleanups.push(() => receiver.close({ timeoutMs: 200 }));

  // What NodeSDK.start() does, after the module that made the receiver was evaluated.
  const spans = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  cleanups.push(() => Promise.all([tracerProvider.shutdown(), meterProvider.shutdown()]).then(() => {}));
  expect(trace.setGlobalTracerProvider(tracerProvider)).toBe(true);
  expect(metrics.setGlobalMeterProvider(meterProvider)).toBe(true);

  const signed = await createSignedDelivery({ secret, type: 'leave.approved' });
  const answer = await receiver.handle({
    method: 'POST',
    headers: signed.headers,
    body: encoder.encode(signed.body),
  });
  expect(answer.status).toBe(202);
  await answer.background;

  await reader.forceFlush();
  const names = new Map<string, number>();
  for (const scope of exporter.getMetrics().at(-1)?.scopeMetrics ?? [])
    for (const metric of scope.metrics)
      names.set(
        metric.descriptor.name,
        metric.dataPoints.reduce(
          (sum, point) => sum + (typeof point.value === 'number' ? point.value : 1),
          0,
        ),
      );
  expect({
    deliveries: names.get(METRICS.deliveries),
    attempts: names.get(METRICS.attempts),
    durations: names.get(METRICS.handlerDuration),
    depth: names.has(METRICS.queueDepth),
  }).toEqual({ deliveries: 1, attempts: 1, durations: 1, depth: true });
  expect(
    spans
      .getFinishedSpans()
      .map((span) => span.name)
      .sort(),
  ).toEqual(['process leave.approved', 'receive leave.approved']);
});
