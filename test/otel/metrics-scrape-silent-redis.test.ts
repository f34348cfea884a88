// A scrape of the metrics while BullMQ's Redis is silent (alive, connections open, no answer): the queue's gauges
// are not counted now after a short deadline, and everything else is still served well within Prometheus's 10 s
// scrape timeout, so the deliveries refused meanwhile stay visible.
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { expect, it, onTestFinished } from 'vitest';
import { createMemoryStore, createReceiver } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { METRICS, otelTelemetry } from 'workforce-webhooks/otel';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { uniqueName } from '../setup/redis-helpers.js';
import { hasRedisServer, startRedisServer } from '../setup/redis-server.js';
import { until } from './sdk.js';

const secret = 'whsec_otel_scrape_silent_redis_test';

// Prometheus gives up on a scrape after 10 s by default; half of it is the widest a scrape may take here.
const SCRAPE_BOUND_MS = 5_000;

it.skipIf(!hasRedisServer())(
  'a scrape while Redis is silent answers in bounded time, with the deliveries counted',
  { timeout: 30_000 },
  async () => {
    const server = await startRedisServer();
    onTestFinished(async () => {
      server.resume();
      await server.dispose();
    });
    const prometheus = new PrometheusExporter({ preventServerStart: true });
    const meterProvider = new MeterProvider({ readers: [prometheus] });
    onTestFinished(() => meterProvider.shutdown());
    const receiver = createReceiver({
      secret,
      logger: false,
      telemetry: otelTelemetry({ meterProvider }),
      store: createMemoryStore(),
      queue: createBullmqQueue({ connection: server.url, name: uniqueName('otel-scrape'), attempts: 1 }),
    }).on('leave.approved', () => {});
    onTestFinished(() => receiver.close({ timeoutMs: 1000 }));

    const signed = await createSignedDelivery({ secret, type: 'leave.approved' });
    const answer = await receiver.handle({
      method: 'POST',
      headers: signed.headers,
      body: new TextEncoder().encode(signed.body),
    });
    expect(answer.status).toBe(202);
    // The metrics that have points in a scrape.
    const names = async () => {
      const { resourceMetrics } = await prometheus.collect();
      return resourceMetrics.scopeMetrics.flatMap((scope) =>
        scope.metrics
          .filter((metric) => metric.dataPoints.length > 0)
          .map((metric) => metric.descriptor.name),
      );
    };
    await until(
      async () => (await names()).includes(METRICS.queueDepth),
      'the queue gauges, Redis answering',
    );

    server.pause();
    const started = performance.now();
    const scraped = await names();
    const took = performance.now() - started;
    expect(scraped).toContain(METRICS.deliveries);
    expect(took).toBeLessThan(SCRAPE_BOUND_MS);
  },
);
