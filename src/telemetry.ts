// The observer interface the receiver reports to (deliveries, attempts, retries, dead letters), and its wiring.
import type {
  AttemptContext,
  DeadLetter,
  JobProcessor,
  QueueCounts,
  QueuedEvent,
  TraceLink,
} from './queue.js';

export type { QueueCounts, TraceLink } from './queue.js';

import type { WebhookResponse } from './responses.js';
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

// One outcome per distinct answer body, found once: the status table is small and its bodies are fixed.
const outcomes = new Map<string, DeliveryAnswer>();

/**
 * The outcome of an answer of the status table.
 * @example
 * outcomeOf(answers.duplicate); // { status: 200, outcome: 'duplicate' }
 */
export function outcomeOf({ status, body }: WebhookResponse): DeliveryAnswer {
  const key = `${status} ${body}`;
  let found = outcomes.get(key);
  if (found === undefined) {
    const parsed = JSON.parse(body) as Record<string, unknown>;
    found =
      typeof parsed.error === 'string'
        ? { status, outcome: 'refused', reason: parsed.error }
        : {
            status,
            outcome: parsed.duplicate
              ? 'duplicate'
              : parsed.ignored
                ? 'ignored'
                : parsed.stale
                  ? 'stale'
                  : 'accepted',
          };
    outcomes.set(key, found);
  }
  return found;
}

/**
 * Where a throw of the telemetry goes (the receiver logs it once per hook): never into an answer, an attempt or
 * a queue's bookkeeping. `hook` names the method that threw, e.g. `attempt.end`.
 */
export type TelemetryFault = (hook: string, error: unknown) => void;

// Every method of `Telemetry`, by name: a Record, so that a method added to the interface must be added here.
const HOOKS: Readonly<Record<keyof Telemetry, true>> = {
  delivery: true,
  attempt: true,
  retried: true,
  deadLettered: true,
  staleSkipped: true,
  replayed: true,
  observeQueue: true,
};

/**
 * The telemetry with every method guarded: a throw goes to `fault`, and a `delivery` or `attempt` that throws
 * observes nothing. Made once per receiver; the observers these return are guarded where they are called
 * (`observeDelivery`, `observeAttempts`, `observeEvent`, `observeClaim`, `traceOf`), so a delivery costs no wrapper.
 * @example
 * const telemetry = guardTelemetry(options.telemetry, (hook, err) => logger.warn({ hook, err }));
 */
export function guardTelemetry(telemetry: Telemetry, fault: TelemetryFault): Telemetry {
  const guarded: Record<string, (...args: unknown[]) => unknown> = {};
  for (const hook of Object.keys(HOOKS) as (keyof Telemetry)[]) {
    const method = telemetry[hook] as ((...args: unknown[]) => unknown) | undefined;
    if (method === undefined) continue;
    // Called on `telemetry`, as a class instance's methods expect; a throw answers undefined (nothing observed).
    guarded[hook] = (...args) => {
      try {
        return method.apply(telemetry, args);
      } catch (error) {
        fault(hook, error);
        return undefined;
      }
    };
  }
  return guarded as Telemetry;
}

/**
 * Tells the delivery's observer its event; a throw goes to `fault`.
 * @example
 * observeEvent(delivery, event, fault);
 */
export function observeEvent(
  delivery: DeliveryObserver | undefined,
  event: WorkforceEvent,
  fault: TelemetryFault,
): void {
  if (delivery?.event === undefined) return;
  try {
    delivery.event(event);
  } catch (error) {
    fault('delivery.event', error);
  }
}

/**
 * Tells the delivery's observer how the claim was answered; a throw goes to `fault`.
 * @example
 * observeClaim(delivery, claim.status, fault);
 */
export function observeClaim(
  delivery: DeliveryObserver | undefined,
  status: ClaimResult['status'],
  fault: TelemetryFault,
): void {
  if (delivery?.claimed === undefined) return;
  try {
    delivery.claimed(status);
  } catch (error) {
    fault('delivery.claimed', error);
  }
}

/**
 * The trace link the delivery's observer gives its job (undefined when it throws: the job goes unlinked).
 * @example
 * const trace = traceOf(delivery, fault);
 */
export function traceOf(
  delivery: DeliveryObserver | undefined,
  fault: TelemetryFault,
): TraceLink | undefined {
  if (delivery?.enqueued === undefined) return undefined;
  try {
    return delivery.enqueued();
  } catch (error) {
    fault('delivery.enqueued', error);
    return undefined;
  }
}

// Reports the answer; the answer stands whatever the observer does.
const answered = (delivery: DeliveryObserver, response: WebhookResponse, fault: TelemetryFault): void => {
  try {
    delivery.answered(outcomeOf(response));
  } catch (error) {
    fault('delivery.answered', error);
  }
};

/**
 * Observes one delivery around `handle`, which never rejects: starts the observer, then reports the answer.
 * `telemetry` is guarded (`guardTelemetry`); the observer's `answered` is guarded here.
 * @example
 * return observeDelivery(telemetry, deliveryId, (delivery) => handle(input, delivery), fault);
 */
export function observeDelivery<A extends WebhookResponse | Promise<WebhookResponse>>(
  telemetry: Telemetry,
  deliveryId: string | undefined,
  handle: (delivery: DeliveryObserver | undefined) => A,
  fault: TelemetryFault,
): A {
  const delivery = telemetry.delivery?.(deliveryId);
  const answer = handle(delivery);
  if (delivery === undefined) return answer;
  if (answer instanceof Promise) {
    return answer.then((response: WebhookResponse) => {
      answered(delivery, response, fault);
      return response;
    }) as A;
  }
  answered(delivery, answer as WebhookResponse, fault);
  return answer;
}

/**
 * The processor with each attempt observed: started, run in its context, and ended once, on the handlers'
 * outcome or on the attempt's abort (a timeout or a shutdown ends it even when the handlers never settle).
 * `telemetry` is guarded (`guardTelemetry`: an `attempt` that throws runs the handlers unobserved); a throw of
 * the observer goes to `fault`, so the attempt's outcome is the handlers' alone.
 * @example
 * const process = observeAttempts(dispatcher.process, telemetry, fault);
 */
export function observeAttempts(
  process: JobProcessor,
  telemetry: Telemetry,
  fault: TelemetryFault,
): JobProcessor {
  if (telemetry.attempt === undefined) return process;
  const start = telemetry.attempt;
  return (job: QueuedEvent, ctx: AttemptContext): Promise<void> => {
    const observer = start(job, ctx.attempt);
    if (observer === undefined) return process(job, ctx);
    let ended = false;
    // Also an abort listener, where a throw would be an uncaught exception.
    const end = (failure: { readonly error: unknown } | undefined): void => {
      if (ended) return;
      ended = true;
      try {
        observer.end(failure);
      } catch (error) {
        fault('attempt.end', error);
      }
    };
    const { signal } = ctx;
    const aborted = (): void => end({ error: signal.reason });
    signal.addEventListener('abort', aborted, { once: true });
    // Never throws: a processor's synchronous throw is the attempt's failure, as a rejection would be.
    let running: Promise<void> | undefined;
    const run = (): Promise<void> => {
      try {
        running = process(job, ctx);
      } catch (error) {
        running = Promise.reject(error);
      }
      return running;
    };
    if (observer.run === undefined) run();
    else {
      try {
        observer.run(run);
      } catch (error) {
        fault('attempt.run', error);
      }
      // The observer threw (or returned) before calling `run`: the handlers run all the same, unobserved.
      if (running === undefined) run();
    }
    return running!.then(
      () => {
        signal.removeEventListener('abort', aborted);
        end(undefined);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', aborted);
        end({ error });
        throw error;
      },
    );
  };
}
