// The real OpenTelemetry SDK with in-memory exporters, for the telemetry tests: spans as ended, metrics on demand.
import { type MeterProvider as ApiMeterProvider, type Attributes, SpanStatusCode } from '@opentelemetry/api';
import {
  AggregationTemporality,
  type DataPoint,
  type Histogram,
  InMemoryMetricExporter,
  MeterProvider,
  type MetricData,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import type { Telemetry } from 'workforce-webhooks';
import { otelTelemetry } from 'workforce-webhooks/otel';

/** One SDK per test: the telemetry wired to it, the ended spans and the metrics collected now. */
export interface TestSdk {
  readonly telemetry: Telemetry;
  spans(): ReadableSpan[];
  /** Every metric collected now, by name. */
  metrics(): Promise<Map<string, MetricData>>;
  /** The data points of `name` whose attributes include `match`. */
  points(name: string, match?: Attributes): Promise<DataPoint<unknown>[]>;
  /** The sum of a counter's points whose attributes include `match` (0 when none). */
  count(name: string, match?: Attributes): Promise<number>;
  shutdown(): Promise<void>;
}

const includes = (attributes: Attributes, match: Attributes): boolean =>
  Object.entries(match).every(([key, value]) => attributes[key] === value);

/** Options of `createTestSdk`: ways to break the SDK (see `broken.ts`). */
export interface TestSdkOptions {
  /** Span processors after the exporting one. */
  readonly spanProcessors?: readonly SpanProcessor[];
  /** What the telemetry gets instead of the meter provider (the metrics read are still the real one's). */
  readonly meterProvider?: (real: MeterProvider) => ApiMeterProvider;
}

/**
 * Starts a tracer and a meter provider of the real SDK with in-memory exporters.
 * @example
 * const sdk = createTestSdk(); createReceiver({ secret, telemetry: sdk.telemetry });
 */
export function createTestSdk({ spanProcessors = [], meterProvider: given }: TestSdkOptions = {}): TestSdk {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(exporter), ...spanProcessors],
  });
  // Exported when the test asks (forceFlush), not on the reader's hour-long timer; cumulative, so the latest
  // export holds everything counted so far.
  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({
    exporter: metricExporter,
    exportIntervalMillis: 3_600_000,
  });
  const meterProvider = new MeterProvider({ readers: [reader] });
  const metrics = async (): Promise<Map<string, MetricData>> => {
    await reader.forceFlush();
    const latest = metricExporter.getMetrics().at(-1);
    metricExporter.reset();
    const all = new Map<string, MetricData>();
    for (const scope of latest?.scopeMetrics ?? [])
      for (const metric of scope.metrics) all.set(metric.descriptor.name, metric);
    return all;
  };
  const points = async (name: string, match: Attributes = {}): Promise<DataPoint<unknown>[]> => {
    const metric = (await metrics()).get(name);
    return ((metric?.dataPoints ?? []) as DataPoint<unknown>[]).filter((point) =>
      includes(point.attributes, match),
    );
  };
  return {
    telemetry: otelTelemetry({ tracerProvider, meterProvider: given?.(meterProvider) ?? meterProvider }),
    spans: () => exporter.getFinishedSpans(),
    metrics,
    points,
    async count(name, match) {
      return (await points(name, match)).reduce((sum, point) => sum + (point.value as number), 0);
    },
    async shutdown() {
      await Promise.all([tracerProvider.shutdown(), meterProvider.shutdown()]);
    },
  };
}

/** The histogram points' total count. */
export const observations = (points: DataPoint<unknown>[]): number =>
  points.reduce((sum, point) => sum + (point.value as Histogram).count, 0);

export { SpanStatusCode };

/**
 * Waits, 10 ms at a time, until `check` holds; throws naming `what` after `timeoutMs` (15 s: BullMQ's workers are
 * slow to start on a loaded machine).
 * @example
 * await until(() => sdk.spans().length === 2, 'both spans');
 */
export async function until(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 15_000,
): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; ) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}
