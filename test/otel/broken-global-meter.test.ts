// A global meter provider that throws when asked for a meter (registered after otelTelemetry() was made, with a tracer
// provider given): the throw is logged, and no span is left started and never ended.
import { type MeterProvider, metrics } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterEach, expect, it } from 'vitest';
import { createMemoryQueue, createReceiver } from 'workforce-webhooks';
import { otelTelemetry } from 'workforce-webhooks/otel';
import { createSignedDelivery } from 'workforce-webhooks/testing';

const secret = 'whsec_otel_broken_global_meter_test';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  metrics.disable();
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

it('every span started is ended, and the meter’s throw is logged', async () => {
  const started: string[] = [];
  const ended: string[] = [];
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({
    spanProcessors: [
      new SimpleSpanProcessor(exporter),
      {
        onStart: (span) => void started.push(span.spanContext().spanId),
        onEnd: (span) => void ended.push(span.spanContext().spanId),
        forceFlush: async () => {},
        shutdown: async () => {},
      },
    ],
  });
  cleanups.push(() => tracerProvider.shutdown());
  const telemetry = otelTelemetry({ tracerProvider });
  const warnings: { hook?: string }[] = [];
  const logger = {
    debug() {},
    info() {},
    warn: (fields: { hook?: string }) => void warnings.push(fields),
    error() {},
  };
  const receiver = createReceiver({ secret, logger, telemetry, queue: createMemoryQueue() }).on(
    'leave.approved',
    () => {},
  );
  cleanups.push(() => receiver.close({ timeoutMs: 200 }));
  const broken: MeterProvider = {
    getMeter() {
      throw new Error('a broken meter provider');
    },
  };
  expect(metrics.setGlobalMeterProvider(broken)).toBe(true);

  const signed = await createSignedDelivery({ secret, type: 'leave.approved' });
  const answer = await receiver.handle({
    method: 'POST',
    headers: signed.headers,
    body: new TextEncoder().encode(signed.body),
  });
  expect(answer.status).toBe(202);
  await answer.background;
  expect(warnings.map((fields) => fields.hook)).toEqual(['delivery']);
  expect(started.length).toBeGreaterThan(0);
  expect(ended.sort()).toEqual(started.sort());
});
