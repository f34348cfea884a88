// workforce-webhooks/otel: the receiver's telemetry on OpenTelemetry, messaging spans and workforce_webhooks.* metrics.
import type { Attributes, Span } from '@opentelemetry/api';
import { errorClassOf } from '../src/dead-letters.js';
import { instantOf } from '../src/instant.js';
import type { QueuedEvent } from '../src/queue.js';
import type { QueueCounts, Telemetry } from '../src/telemetry.js';
import type { WorkforceEvent } from '../src/types.js';
import { api } from './otel-api.js';
import { instrumentsOf } from './otel-instruments.js';
import { checkOptions, type OtelTelemetryOptions } from './otel-options.js';
import { watchForSdk } from './otel-sdk-watch.js';
import { contextOf, linkOf } from './otel-trace-link.js';

export { METRICS } from './otel-instruments.js';
export type { OtelTelemetryOptions } from './otel-options.js';

const SCOPE = 'workforce-webhooks';
const SYSTEM = 'workforce';

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
  // The queue gauges are read through the SDK's meter only: with no delivery since the SDK registered (a quiet night
  // after a restart) they would be missing, dead letters kept from before included. So while the meter is a no-op,
  // the global provider is looked at once a second for the first minutes.
  let watching = false;
  const lookForSdk = (): boolean => {
    const before = meterProvider;
    try {
      adopt();
    } catch {
      // Left to the next delivery's adoption, whose throw the receiver logs.
      meterProvider = before;
      return true;
    }
    return instruments.measuring;
  };

  const endAttempts = (outcome: 'success' | 'retry' | 'dead_letter'): void => {
    instruments.attempts.add(1, { outcome });
  };

  return {
    delivery(deliveryId) {
      // Before the span starts: a meter that throws here leaves no span started and never ended.
      if (!instruments.measuring && following) adopt();
      const span: Span = tracer.startSpan('receive', { kind: api.SpanKind.CONSUMER });
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
          // A 5xx is ours (the sender retries it); a 4xx is the sender's, as for HTTP server spans. A failed
          // operation names its error in error.type (conditionally required by the messaging and HTTP conventions):
          // the answer's code, one of the status table's few.
          if (status >= 500) {
            span.setStatus({ code: api.SpanStatusCode.ERROR, message: reason });
            if (reason !== undefined) span.setAttribute('error.type', reason);
          }
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
      if (!instruments.measuring && following) adopt();
      const delivered = contextOf(job.trace);
      // Its own trace, linked to the delivery that accepted the event (on this instance or another).
      const span = tracer.startSpan(
        `process ${event.type}`,
        { kind: api.SpanKind.CONSUMER, links: delivered === undefined ? [] : [{ context: delivered }] },
        api.ROOT_CONTEXT,
      );
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
              // The class name only (a handler's message may carry personal data): the first failing handler's, as
              // the dead-letter list names it, and never a throw of its own (a value that throws when looked at).
              const type = errorClassOf(failure.error);
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
      if (following && !instruments.measuring && !watching) {
        watching = true;
        watchForSdk(lookForSdk);
      }
    },
  };
}
