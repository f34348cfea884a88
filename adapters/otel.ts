// workforce-webhooks/otel: the receiver's telemetry on OpenTelemetry, messaging spans and workforce_webhooks.* metrics.
import type {
  Attributes,
  BatchObservableResult,
  Counter,
  Histogram,
  Meter,
  MeterProvider,
  Span,
  SpanContext,
  TracerProvider,
} from '@opentelemetry/api';
import { withDeadline } from '../src/deadline.js';
import { ConfigurationError } from '../src/errors.js';
import { instantOf } from '../src/instant.js';
import { HandlerFailure, type QueuedEvent } from '../src/queue.js';
import type { QueueCounts, Telemetry, TraceLink } from '../src/telemetry.js';
import type { WorkforceEvent } from '../src/types.js';

type Api = typeof import('@opentelemetry/api');

// The API is an optional peer: without it this entry says what to install instead of a bare resolution error.
const api: Api = await import('@opentelemetry/api').catch((error: unknown) => {
  throw new Error(
    'workforce-webhooks/otel needs @opentelemetry/api, which is not installed. Install it: npm install @opentelemetry/api',
    { cause: error },
  );
});

/** Options of `otelTelemetry`. */
export interface OtelTelemetryOptions {
  /** Where spans go. Default: the global one (`trace.getTracerProvider()`), a no-op until an SDK registers. */
  readonly tracerProvider?: TracerProvider;
  /** Where metrics go. Default: the global one (`metrics.getMeterProvider()`). */
  readonly meterProvider?: MeterProvider;
}

/** The metric names, fixed so dashboards can rely on them. */
export const METRICS: {
  readonly deliveries: 'workforce_webhooks.deliveries';
  readonly handlerDuration: 'workforce_webhooks.handler.duration';
  readonly eventLag: 'workforce_webhooks.event.lag';
  readonly attempts: 'workforce_webhooks.attempts';
  readonly queueDepth: 'workforce_webhooks.queue.depth';
  readonly deadLetters: 'workforce_webhooks.dead_letters';
  readonly staleSkips: 'workforce_webhooks.stale_skips';
  readonly replays: 'workforce_webhooks.replays';
} = Object.freeze({
  deliveries: 'workforce_webhooks.deliveries',
  handlerDuration: 'workforce_webhooks.handler.duration',
  eventLag: 'workforce_webhooks.event.lag',
  attempts: 'workforce_webhooks.attempts',
  queueDepth: 'workforce_webhooks.queue.depth',
  deadLetters: 'workforce_webhooks.dead_letters',
  staleSkips: 'workforce_webhooks.stale_skips',
  replays: 'workforce_webhooks.replays',
});

const SCOPE = 'workforce-webhooks';
const SYSTEM = 'workforce';
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
// From seconds (a queue keeping up) to the sender's two days of retries.
const LAG_BUCKETS = [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600, 4 * 3600, 24 * 3600, 72 * 3600];
// A queue's counts are one round trip (a few ms on a live Redis). A silent Redis must not hold a scrape for the
// queue's own 10 s admin deadline, Prometheus's default scrape timeout: the whole scrape would fail with it.
const COUNTS_TIMEOUT_MS = 2_000;
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

// W3C trace context as plain strings: it travels in a job's data (JSON in Redis) whatever propagator the app set.
const linkOf = (context: SpanContext): TraceLink | undefined =>
  api.isSpanContextValid(context)
    ? {
        traceparent: `00-${context.traceId}-${context.spanId}-${context.traceFlags.toString(16).padStart(2, '0')}`,
      }
    : undefined;

const contextOf = (link: TraceLink | undefined): SpanContext | undefined => {
  const found = link?.traceparent === undefined ? null : TRACEPARENT.exec(link.traceparent);
  if (found === null) return undefined;
  const context = {
    traceId: found[1]!,
    spanId: found[2]!,
    traceFlags: Number.parseInt(found[3]!, 16),
    isRemote: true,
  };
  return api.isSpanContextValid(context) ? context : undefined;
};

// The class name only: a handler's message may carry personal data, so it never becomes an attribute.
const errorType = (error: unknown): string => {
  const cause = error instanceof HandlerFailure && error.errors.length === 1 ? error.errors[0] : error;
  if (typeof cause !== 'object' || cause === null) return typeof cause;
  return (cause as { constructor?: { name?: unknown } }).constructor?.name?.toString() || 'Error';
};

// Seconds from the event's `occurredAt` to now; undefined when it is not a date.
const lagOf = (event: WorkforceEvent): number | undefined => {
  const at = instantOf(event.occurredAt);
  return Number.isFinite(at) ? Math.max(0, (Date.now() - at) / 1000) : undefined;
};

const operationAttributes = (operation: 'receive' | 'process'): Attributes =>
  Object.freeze({
    'messaging.system': SYSTEM,
    'messaging.operation.type': operation,
    'messaging.operation.name': operation,
  });
const RECEIVE: Attributes = operationAttributes('receive');
const PROCESS: Attributes = operationAttributes('process');

const eventAttributes = (event: WorkforceEvent): Attributes => ({
  'messaging.message.id': event.id,
  'messaging.destination.name': event.type,
});

// The no-op counter's class: a meter whose counters are of it records nothing (no SDK behind it).
const NOOP_COUNTER = api.createNoopMeter().createCounter('_').constructor;

// The instruments of one meter, and whether it records (with no SDK registered it is the API's no-op one).
interface Instruments {
  readonly measuring: boolean;
  readonly deliveries: Counter;
  readonly duration: Histogram;
  readonly lag: Histogram;
  readonly attempts: Counter;
  readonly staleSkips: Counter;
  readonly replays: Counter;
}

const instrumentsOf = (meter: Meter, queues: readonly (() => Promise<QueueCounts>)[]): Instruments => {
  const deliveries = meter.createCounter(METRICS.deliveries, {
    description: 'Deliveries answered, by outcome (and reason, when refused)',
    unit: '{delivery}',
  });
  const instruments: Instruments = {
    measuring: deliveries.constructor !== NOOP_COUNTER,
    deliveries,
    duration: meter.createHistogram(METRICS.handlerDuration, {
      description: 'Duration of one attempt of an event’s handlers',
      unit: 's',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    }),
    lag: meter.createHistogram(METRICS.eventLag, {
      description: 'Time from the event’s occurredAt to the end of its processing',
      unit: 's',
      advice: { explicitBucketBoundaries: LAG_BUCKETS },
    }),
    attempts: meter.createCounter(METRICS.attempts, {
      description: 'Handler attempts, by what followed: success, retry or dead_letter',
      unit: '{attempt}',
    }),
    staleSkips: meter.createCounter(METRICS.staleSkips, {
      description: 'Events skipped as stale by ordering',
      unit: '{event}',
    }),
    replays: meter.createCounter(METRICS.replays, {
      description: 'Dead letters queued again',
      unit: '{event}',
    }),
  };
  const depth = meter.createObservableGauge(METRICS.queueDepth, {
    description: 'Jobs held by the queue: waiting, retrying and running',
    unit: '{job}',
  });
  const deadLetters = meter.createObservableGauge(METRICS.deadLetters, {
    description: 'Dead letters kept, waiting for a replay',
    unit: '{event}',
  });
  // A queue that cannot be counted now (Redis away, or silent past COUNTS_TIMEOUT_MS) is left out of this
  // collection rather than read as zero.
  meter.addBatchObservableCallback(
    async (result: BatchObservableResult) => {
      const counted = await Promise.allSettled(
        queues.map((counts) => withDeadline(counts, COUNTS_TIMEOUT_MS, 'queue_unavailable')),
      );
      let held = 0;
      let dead = 0;
      let any = false;
      for (const outcome of counted) {
        if (outcome.status !== 'fulfilled') continue;
        any = true;
        held += outcome.value.depth;
        dead += outcome.value.deadLetters;
      }
      if (!any) return;
      result.observe(depth, held);
      result.observe(deadLetters, dead);
    },
    [depth, deadLetters],
  );
  return instruments;
};

// A provider given as the options (otelTelemetry(meterProvider)) or under another name would leave the global ones
// in use, no-ops when the app registers none: nothing observed, and nothing said. Refused at once, with the fix.
const OPTIONS: Readonly<Record<keyof OtelTelemetryOptions, 'getTracer' | 'getMeter'>> = {
  tracerProvider: 'getTracer',
  meterProvider: 'getMeter',
};
function checkOptions(options: OtelTelemetryOptions): void {
  const fix =
    'Pass otelTelemetry({ tracerProvider, meterProvider }) (each optional; the global one by default)';
  if (typeof options !== 'object' || options === null)
    throw new ConfigurationError(`otelTelemetry takes an options object, got ${typeof options}. ${fix}`);
  const given = options as Record<string, unknown>;
  for (const method of ['getTracer', 'getMeter'])
    if (typeof given[method] === 'function')
      throw new ConfigurationError(
        `otelTelemetry was given a provider itself, not options. Pass otelTelemetry({ ${method === 'getTracer' ? 'tracerProvider' : 'meterProvider'} })`,
      );
  for (const key of Object.keys(given)) {
    const method = OPTIONS[key as keyof OtelTelemetryOptions];
    if (method === undefined)
      throw new ConfigurationError(`otelTelemetry has no option ${JSON.stringify(key)}. ${fix}`);
    const value = given[key] as Record<string, unknown> | undefined;
    if (value !== undefined && typeof value?.[method] !== 'function')
      throw new ConfigurationError(
        `otelTelemetry's ${key} must have a ${method} method (an OpenTelemetry ${key.replace('P', ' p')}). ${fix}`,
      );
  }
}

/**
 * The receiver's telemetry on OpenTelemetry: a `receive` span per delivery (body read to answer) and a `process`
 * span per handler attempt linked to it (across instances with BullMQ), following the messaging semantic
 * conventions, and the `workforce_webhooks.*` metrics. Never a body, a secret or an error message in an attribute.
 * @example
 * createReceiver({ secret, telemetry: otelTelemetry() });
 */
export function otelTelemetry(options: OtelTelemetryOptions = {}): Telemetry {
  checkOptions(options);
  const { tracerProvider = api.trace.getTracerProvider(), meterProvider: given } = options;
  const tracer = tracerProvider.getTracer(SCOPE);
  const queues: (() => Promise<QueueCounts>)[] = [];
  let meterProvider = given ?? api.metrics.getMeterProvider();
  let instruments = instrumentsOf(meterProvider.getMeter(SCOPE), queues);
  // The metrics API has no proxy provider (the trace API has one): a meter taken from the global provider before
  // the SDK registers (an ESM app evaluates the receiver's module before the line that starts the SDK) would stay
  // a no-op for ever. So while it is one, each delivery and attempt reads the global provider again (one global
  // read, no allocation) and takes the SDK's meter once it is there.
  const following = given === undefined;
  const adopt = (): void => {
    const registered = api.metrics.getMeterProvider();
    if (registered === meterProvider) return;
    meterProvider = registered;
    instruments = instrumentsOf(registered.getMeter(SCOPE), queues);
  };

  const endAttempts = (outcome: 'success' | 'retry' | 'dead_letter'): void => {
    instruments.attempts.add(1, { outcome });
  };

  return {
    delivery(deliveryId) {
      const span: Span = tracer.startSpan('receive', { kind: api.SpanKind.CONSUMER });
      if (!instruments.measuring && following) adopt();
      // No SDK: a delivery whose span does not record either is not observed at all (no observer, no promise).
      if (!instruments.measuring && !span.isRecording()) return undefined;
      // Set once at the start: a delivery refused before its event is read still says what it was.
      span.setAttributes(RECEIVE);
      if (deliveryId !== undefined) span.setAttribute('workforce.delivery.id', deliveryId);
      return {
        event(event) {
          span.setAttributes(eventAttributes(event));
          span.updateName(`receive ${event.type}`);
        },
        claimed(status) {
          span.setAttribute('workforce.claim', status);
        },
        enqueued: () => linkOf(span.spanContext()),
        answered({ status, outcome, reason }) {
          span.setAttributes({ 'http.response.status_code': status, 'workforce.outcome': outcome });
          if (reason !== undefined) span.setAttribute('workforce.refusal.reason', reason);
          // A 5xx is ours (the sender retries it); a 4xx is the sender's, as for HTTP server spans.
          if (status >= 500) span.setStatus({ code: api.SpanStatusCode.ERROR, message: reason });
          // A meter that throws still lets the span end (and the throw reach the receiver's log).
          try {
            instruments.deliveries.add(1, reason === undefined ? { outcome } : { outcome, reason });
          } finally {
            span.end();
          }
        },
      };
    },
    attempt(job: QueuedEvent, attempt: number) {
      const { event } = job;
      const delivered = contextOf(job.trace);
      // Its own trace, linked to the delivery that accepted the event (on this instance or another).
      const span = tracer.startSpan(
        `process ${event.type}`,
        { kind: api.SpanKind.CONSUMER, links: delivered === undefined ? [] : [{ context: delivered }] },
        api.ROOT_CONTEXT,
      );
      if (!instruments.measuring && following) adopt();
      if (!instruments.measuring && !span.isRecording()) return undefined;
      span.setAttributes(PROCESS);
      span.setAttributes(eventAttributes(event));
      if (job.deliveryId !== undefined) span.setAttribute('workforce.delivery.id', job.deliveryId);
      span.setAttribute('workforce.attempt', attempt);
      const started = performance.now();
      return {
        // From the root, as the span: the context active here is whichever request last woke the queue up (the
        // memory queue runs the next job in the continuation of the attempt that ended), never this event's.
        run: (handlers) => api.context.with(api.trace.setSpan(api.ROOT_CONTEXT, span), handlers),
        end(failure) {
          const seconds = (performance.now() - started) / 1000;
          // A meter that throws still lets the span end (and the throw reach the receiver's log).
          try {
            if (failure === undefined) {
              instruments.duration.record(seconds, { event_type: event.type, outcome: 'success' });
              endAttempts('success');
              const late = lagOf(event);
              if (late !== undefined) instruments.lag.record(late, { event_type: event.type });
            } else {
              const type = errorType(failure.error);
              span.setAttribute('error.type', type);
              span.setStatus({ code: api.SpanStatusCode.ERROR, message: type });
              instruments.duration.record(seconds, { event_type: event.type, outcome: 'failure' });
            }
          } finally {
            span.end();
          }
        },
      };
    },
    retried: () => endAttempts('retry'),
    deadLettered(letter) {
      // One outcome per attempt made: a letter close() made of an event that waited (queued, or between attempts,
      // its last one counted as a retry) adds none; it is still a dead letter, in the lag and the gauge.
      if (letter.waiting !== true) endAttempts('dead_letter');
      const late = lagOf(letter.event);
      if (late !== undefined) instruments.lag.record(late, { event_type: letter.event.type });
    },
    staleSkipped: (event) => instruments.staleSkips.add(1, { event_type: event.type }),
    replayed: () => instruments.replays.add(1),
    observeQueue(counts) {
      queues.push(counts);
    },
  };
}
