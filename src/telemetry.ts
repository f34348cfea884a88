// The observer interface the receiver reports to (deliveries, attempts, retries, dead letters); its wiring is
// in telemetry-guard.ts, telemetry-delivery.ts and telemetry-attempts.ts.
import type { DeadLetter, QueueCounts, QueuedEvent, TraceLink } from './queue.js';

export type { QueueCounts, TraceLink } from './queue.js';

import type { ClaimResult } from './store.js';
import type { WorkforceEvent } from './types.js';

/** How a delivery was answered: the outcome of the status table, and the refusal's code. */
export type DeliveryOutcome = 'accepted' | 'duplicate' | 'ignored' | 'stale' | 'refused';

/** A delivery's answer as telemetry sees it: the HTTP status, the outcome and, when refused, the reason. */
export interface DeliveryAnswer {
  readonly status: number;
  readonly outcome: DeliveryOutcome;
  /** The `error` code of the answer (e.g. `signature_mismatch`, `queue_full`); only when refused. */
  readonly reason?: string;
}

/** Observes one delivery, from its body read to its answer. */
export interface DeliveryObserver {
  /** The body is verified and parsed into this event. */
  event?(event: WorkforceEvent): void;
  /** The dedupe store answered the claim. */
  claimed?(status: ClaimResult['status']): void;
  /** The event is handed to the queue (or run inline): what is returned is stored on the job for its attempts. */
  enqueued?(): TraceLink | undefined;
  /** The answer; called once, last. */
  answered(answer: DeliveryAnswer): void;
}

/** Observes one attempt of a job's handlers. */
export interface AttemptObserver {
  /** Runs the handlers inside the attempt's context (so spans they open nest under it). */
  run?<T>(handlers: () => T): T;
  /** The attempt ended: undefined on success, else what the handlers threw (or the timeout, or the shutdown). */
  end(failure: { readonly error: unknown } | undefined): void;
}

/**
 * What the receiver reports, for `createReceiver({ telemetry })`; every method is optional.
 * `otelTelemetry()` (`workforce-webhooks/otel`) implements it on OpenTelemetry; any other backend can too.
 * Nothing here is ever given a body, a secret or a handler's error message (only the error object, whose
 * class name is the most an implementation should record). A method that throws is logged (once per method)
 * and ignored: it never changes an answer, an attempt's outcome, a retry or a dead letter.
 * @example
 * createReceiver({ secret, telemetry: { deadLettered: (letter) => metrics.increment('dead', letter.event.type) } });
 */
export interface Telemetry {
  /**
   * A delivery's body was read: observe it to its answer (undefined: not this one). `deliveryId` is the
   * `svc-delivery-id` header.
   */
  delivery?(deliveryId: string | undefined): DeliveryObserver | undefined;
  /** An attempt of a job's handlers starts (1-based `attempt`); `job.trace` is what `enqueued` returned. */
  attempt?(job: QueuedEvent, attempt: number): AttemptObserver | undefined;
  /** Attempt `attempt` failed and the event will be tried again (by the queue, or by the sender in inline mode). */
  retried?(job: QueuedEvent, attempt: number): void;
  /** The event failed its last attempt. */
  deadLettered?(letter: DeadLetter): void;
  /** With ordering: the event was skipped, a newer one of its record being handled already. */
  staleSkipped?(event: WorkforceEvent): void;
  /** A dead letter was queued again by `receiver.replay`. */
  replayed?(eventId: string): void;
  /** Called once by `createReceiver` when its queue can count its jobs; `counts` may be called at any time. */
  observeQueue?(counts: () => Promise<QueueCounts>): void;
}

/**
 * Where a throw of the telemetry goes (the receiver logs it once per hook): never into an answer, an attempt or
 * a queue's bookkeeping. `hook` names the method that threw, e.g. `attempt.end`.
 */
export type TelemetryFault = (hook: string, error: unknown) => void;
