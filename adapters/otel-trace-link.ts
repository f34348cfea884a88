// W3C trace context as plain strings: it travels in a job's data (JSON in Redis) whatever propagator the app set.
import type { SpanContext } from '@opentelemetry/api';
import type { TraceLink } from '../src/telemetry.js';
import { api } from './otel-api.js';

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * The `traceparent` of a span's context, or undefined when the context is not a valid one (no SDK).
 * @example
 * const trace = linkOf(span.spanContext()); // { traceparent: '00-<trace id>-<span id>-01' }
 */
export const linkOf = (context: SpanContext): TraceLink | undefined =>
  api.isSpanContextValid(context)
    ? {
        traceparent: `00-${context.traceId}-${context.spanId}-${context.traceFlags.toString(16).padStart(2, '0')}`,
      }
    : undefined;

/**
 * The remote span context a job's `traceparent` names, or undefined when it names none (absent, or not W3C's).
 * @example
 * const delivered = contextOf(job.trace); // a link from the attempt's span to the delivery's
 */
export const contextOf = (link: TraceLink | undefined): SpanContext | undefined => {
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
