// Telemetry for examples/scaling: OpenTelemetry metrics served on the app's own /metrics for Prometheus to scrape.
// #region telemetry
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import type { Telemetry } from 'workforce-webhooks';
import { otelTelemetry } from 'workforce-webhooks/otel';

// The exporter is a metric reader: each scrape collects the workforce_webhooks.* metrics (and the queue's gauges).
const prometheus = new PrometheusExporter({ preventServerStart: true });
const meterProvider = new MeterProvider({ readers: [prometheus] });

/** Pass to createReceiver({ telemetry }); with a tracer provider registered too, spans follow the same way. */
export const telemetry: Telemetry = otelTelemetry({ meterProvider });

/** Mount on GET /metrics. */
export const metrics = (request: IncomingMessage, response: ServerResponse): void =>
  prometheus.getMetricsRequestHandler(request, response);
// #endregion telemetry
