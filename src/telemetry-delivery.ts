// One delivery observed, from its event to its answer: each call of its observer guarded, each answer's outcome
// found once.
import type { TraceLink } from './queue.js';
import type { WebhookResponse } from './responses.js';
import type { ClaimResult } from './store.js';
import type { DeliveryAnswer, DeliveryObserver, Telemetry, TelemetryFault } from './telemetry.js';
import type { WorkforceEvent } from './types.js';

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
