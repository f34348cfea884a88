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
 * class name is the most an implementation should record).
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
 * Observes one delivery around `handle`, which never rejects: starts the observer, then reports the answer.
 * @example
 * return observeDelivery(telemetry, deliveryId, (delivery) => handle(input, delivery));
 */
export function observeDelivery<A extends WebhookResponse | Promise<WebhookResponse>>(
  telemetry: Telemetry,
  deliveryId: string | undefined,
  handle: (delivery: DeliveryObserver | undefined) => A,
): A {
  const delivery = telemetry.delivery?.(deliveryId);
  const answer = handle(delivery);
  if (delivery === undefined) return answer;
  if (answer instanceof Promise) {
    return answer.then((response: WebhookResponse) => {
      delivery.answered(outcomeOf(response));
      return response;
    }) as A;
  }
  delivery.answered(outcomeOf(answer as WebhookResponse));
  return answer;
}

/**
 * The processor with each attempt observed: started, run in its context, and ended once, on the handlers'
 * outcome or on the attempt's abort (a timeout or a shutdown ends it even when the handlers never settle).
 * @example
 * const process = observeAttempts(dispatcher.process, telemetry);
 */
export function observeAttempts(process: JobProcessor, telemetry: Telemetry): JobProcessor {
  if (telemetry.attempt === undefined) return process;
  const start = telemetry.attempt.bind(telemetry);
  return (job: QueuedEvent, ctx: AttemptContext): Promise<void> => {
    const observer = start(job, ctx.attempt);
    if (observer === undefined) return process(job, ctx);
    let ended = false;
    const end = (failure: { readonly error: unknown } | undefined): void => {
      if (ended) return;
      ended = true;
      observer.end(failure);
    };
    const { signal } = ctx;
    const aborted = (): void => end({ error: signal.reason });
    signal.addEventListener('abort', aborted, { once: true });
    const run = (): Promise<void> => process(job, ctx);
    let running: Promise<void>;
    try {
      running = observer.run === undefined ? run() : observer.run(run);
    } catch (error) {
      running = Promise.reject(error);
    }
    return running.then(
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
