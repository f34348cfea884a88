// receiver.handle: verify, parse, dedupe, then queue or run inline, and answer from the status table.
import type { Claims } from './claims.js';
import {
  CURRENT_API_VERSION,
  eventLogFields,
  isServiceDelivery,
  loggableApiVersion,
  parseEvent,
} from './envelope.js';
import { ConfigurationError, WebhookVerificationError } from './errors.js';
import { type HeadersInput, headerValue } from './headers.js';
import type { InlineRunner } from './inline.js';
import type { Logger } from './logger.js';
import type { Ordering } from './ordering.js';
import type { QueuedEvent } from './queue.js';
import type { RefusalReport } from './refusal-report.js';
import type { Registry } from './registry.js';
import { type Answer, answers, type WebhookResponse, withBackground } from './responses.js';
import { NOT_CONFIGURED, type SecretSource } from './secret-source.js';
import { checkSignature, type ParsedSignature, StaleSignatureError } from './signature.js';
import type { ClaimResult } from './store.js';
import type { DeliveryObserver, Telemetry, TelemetryFault } from './telemetry.js';
import { observeClaim, observeDelivery, observeEvent, traceOf } from './telemetry-delivery.js';
import type { WorkforceEvent } from './types.js';

const OWN_PREFIX = /^workforce-webhooks: /;
const encoder = new TextEncoder();

// The fix for a `body` that is not the request's bytes, naming what was given (its kind, never its content).
const bodyFix = (body: unknown): string =>
  `pass the raw request bytes as \`body\` (a Uint8Array or Buffer as received, or the body read as text), read before any JSON parser; got ${
    body === undefined || body === null
      ? 'none'
      : body instanceof ArrayBuffer
        ? 'an ArrayBuffer: pass new Uint8Array(buffer)'
        : typeof body === 'object'
          ? 'an object (a parsed body?)'
          : typeof body
  }`;

/** What adapters pass to `receiver.handle`. */
export interface HandleInput {
  /** Request method; anything but POST is answered 405. */
  readonly method?: string;
  readonly headers: HeadersInput;
  /** The raw body exactly as received; text (`await request.text()`) is taken as its UTF-8 bytes. */
  readonly body?: Uint8Array | string;
  /** Set instead of `body` when the adapter could not get the raw bytes. */
  readonly bodyProblem?: BodyProblem;
}

/**
 * Why an adapter has no raw body: too large, not complete within `bodyTimeoutMs`, already parsed by something
 * else (with the fix), or unreadable.
 */
export type BodyProblem =
  | { readonly kind: 'too_large' }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'raw_body_unavailable'; readonly fix: string }
  | { readonly kind: 'unreadable' };

/** What the receiver changes while it runs, read by the delivery path. */
export interface ReceiverState {
  /** Set by `close()`: new deliveries are answered 503 `shutting_down`. */
  closing: boolean;
  /** Set by the first on() / onAny(): a delivery ignored before it is one the app meant to handle. */
  handlersAdded: boolean;
}

/** The receiver's parts the delivery path uses, made once by `createReceiver`. */
export interface HandleParts {
  readonly secrets: SecretSource;
  readonly toleranceSeconds: number;
  readonly now: () => number;
  readonly maxBodyBytes: number;
  readonly mode: 'queue' | 'inline';
  readonly logger: Logger;
  readonly warnOnce: (kind: string, obj: object, msg: string, level?: 'warn' | 'error') => void;
  readonly state: Readonly<ReceiverState>;
  readonly registry: Registry;
  readonly refusals: RefusalReport;
  readonly claims: Claims;
  readonly ordering: Ordering | undefined;
  readonly enqueue: (job: QueuedEvent, token: string) => Answer;
  readonly inline: InlineRunner;
  /** Guarded (`guardTelemetry`), or undefined when off. */
  readonly telemetry: Telemetry | undefined;
  readonly telemetryFault: TelemetryFault;
}

// What a delivery answered 200 ignored before any handler was registered logs: the service never sends it again.
const NO_HANDLERS =
  'workforce-webhooks: a delivery came before any handler was registered, and was answered 200 ignored: the service does not send it again. Register every receiver.on() / onAny() before the app listens (before any await in its start-up)';

/**
 * The delivery path: raw bytes and headers in, an answer from the status table out (at once for a refusal, a
 * promise once the store is asked); it never throws or rejects, an unexpected failure is answered 500.
 * @example
 * const handle = createHandle({ secrets, toleranceSeconds, now, maxBodyBytes, mode, logger, ... });
 * const answer = await handle({ method: 'POST', headers, body });
 */
export function createHandle({
  secrets,
  toleranceSeconds,
  now,
  maxBodyBytes,
  mode,
  logger,
  warnOnce,
  state,
  registry,
  refusals,
  claims,
  ordering,
  enqueue,
  inline,
  telemetry,
  telemetryFault,
}: HandleParts): (input: HandleInput) => Answer {
  const refuseBody = (problem: BodyProblem): WebhookResponse => {
    if (problem.kind === 'too_large') return answers.payloadTooLarge;
    if (problem.kind === 'timeout') return answers.bodyTimeout;
    if (problem.kind === 'unreadable') return answers.badRequest.invalid_payload;
    warnOnce(
      'raw_body_unavailable',
      { fix: problem.fix },
      `workforce-webhooks: the raw request body is not available (something read, parsed or decoded it before this route), so its signature cannot be checked. Fix: ${problem.fix}`,
      'error',
    );
    return answers.rawBodyUnavailable;
  };

  // The hot path: one HMAC over the bytes as received, one JSON.parse, one claim, one enqueue. A refusal is
  // answered at once (node:crypto); anything that reached the store answers with a promise.
  const handle = (input: HandleInput, delivery: DeliveryObserver | undefined): Answer => {
    const { method, headers, bodyProblem } = input;
    if (method !== undefined && method !== 'POST' && method.toUpperCase() !== 'POST')
      return answers.methodNotAllowed;
    if (state.closing) return answers.unavailable.shutting_down;
    if (bodyProblem !== undefined) return refuseBody(bodyProblem);
    // Text is taken as its UTF-8 bytes, as verifySignature takes it (`await request.text()`); from JavaScript, what a
    // parser left (an object), an ArrayBuffer or nothing is the host's mistake, answered with the fix, not a 500 of ours.
    const body = typeof input.body === 'string' ? encoder.encode(input.body) : input.body;
    if (!ArrayBuffer.isView(body)) return refuseBody({ kind: 'raw_body_unavailable', fix: bodyFix(body) });
    if (body.byteLength > maxBodyBytes) return answers.payloadTooLarge;
    const secretsNow = secrets();
    if (secretsNow === undefined) {
      warnOnce('not_configured', {}, NOT_CONFIGURED, 'error');
      return answers.notConfigured;
    }
    const deliveryId = headerValue(headers, 'svc-delivery-id');
    let verified: ParsedSignature | Promise<ParsedSignature>;
    const header = headerValue(headers, 'svc-signature');
    try {
      verified = checkSignature(body, header, secretsNow, toleranceSeconds, now());
    } catch (error) {
      return refuseSignature(error, deliveryId, headers, body);
    }
    if (verified instanceof Promise) {
      return verified.then(
        // Web Crypto answers later: close() may have begun meanwhile, and the app may close the store's client as
        // soon as it resolves. Answered as any delivery after close() began; the service sends it again.
        () =>
          state.closing ? answers.unavailable.shutting_down : accept(body, headers, deliveryId, delivery),
        (error: unknown) => refuseSignature(error, deliveryId, headers, body),
      );
    }
    return accept(body, headers, deliveryId, delivery);
  };

  // Only refusals pay for what the report needs: the signature's age, and whether a request without a usable
  // header is the service's own (scanners send bare POSTs; the service's come so only when something drops it).
  const refuseSignature = (
    error: unknown,
    deliveryId: string | undefined,
    headers: HeadersInput,
    body: Uint8Array,
  ): WebhookResponse => {
    if (!(error instanceof WebhookVerificationError)) throw error;
    const { code } = error;
    logger.info({ code, deliveryId }, 'workforce-webhooks: delivery refused');
    // A stale signature speaks of the clock only when it matched: a stale forgery (a scanner) proves nothing of it.
    if (error instanceof StaleSignatureError)
      refusals.refused(code, error.signed ? error.ageSeconds : undefined);
    else if (code === 'signature_mismatch') refusals.refused(code);
    else if (isServiceDelivery(body, headers)) refusals.refused(code, undefined, headers);
    return answers.badRequest[code];
  };

  const accept = (
    body: Uint8Array,
    headers: HeadersInput,
    deliveryId: string | undefined,
    delivery: DeliveryObserver | undefined,
  ): Answer => {
    refusals.verified();
    let event: WorkforceEvent;
    try {
      event = parseEvent(body, headers);
    } catch (error) {
      logger.warn({ deliveryId, err: error }, 'workforce-webhooks: signed body is not a valid event');
      return answers.badRequest.invalid_payload;
    }
    observeEvent(delivery, event, telemetryFault);
    if (event.apiVersion !== CURRENT_API_VERSION) {
      // Once per version: one that is not a date is one kind, named nowhere (its text is the body's).
      const apiVersion = loggableApiVersion(event.apiVersion);
      warnOnce(
        `api_version:${apiVersion ?? 'other'}`,
        { apiVersion },
        'workforce-webhooks: unknown apiVersion, accepted',
      );
    }
    if (registry.match(event.type).length === 0) {
      logger.debug(eventLogFields(event), 'workforce-webhooks: no handler for this type, ignored');
      if (!state.handlersAdded) warnOnce('no_handlers', {}, NO_HANDLERS);
      return answers.ignored;
    }
    // Inline: a copy of an event this process is running is in progress whatever the store says (its lease may
    // have lapsed while a handler held the event loop; the next renewal takes it back).
    if (mode === 'inline' && inline.running(event.id)) return answers.inProgress;
    // Ordering on: the claim also reads the key's watermark, in the same store step.
    const orderingKey = ordering === undefined ? undefined : ordering.keyOf(event);
    let claim: Promise<ClaimResult>;
    try {
      claim = claims.claim(event.id, orderingKey);
    } catch (error) {
      return storeDown(event, error);
    }
    return claim.then(
      (result) => claimed(event, deliveryId, result, orderingKey, delivery),
      (error: unknown) => storeDown(event, error),
    );
  };

  // The store's own message may start with the package's name too: said once in the line.
  const storeDown = (event: WorkforceEvent, failure: unknown): WebhookResponse => {
    // A store that says how it is set up wrong (a table never made) is not an outage: its error carries the fix. One
    // whose call the receiver's own deadline cut short is asked what that means (an address that never answered).
    const error = failure instanceof ConfigurationError ? failure : claims.explain(failure);
    logger.error(
      { eventId: event.id, err: error },
      error instanceof ConfigurationError
        ? `workforce-webhooks: the dedupe store is not set up: ${error.message.replace(OWN_PREFIX, '')}`
        : 'workforce-webhooks: the dedupe store is unreachable',
    );
    return answers.unavailable.store_unavailable;
  };

  const claimed = (
    event: WorkforceEvent,
    deliveryId: string | undefined,
    claim: ClaimResult,
    orderingKey: string | undefined,
    delivery: DeliveryObserver | undefined,
  ): Answer => {
    observeClaim(delivery, claim.status, telemetryFault);
    if (claim.status === 'done') return answers.duplicate;
    if (claim.status === 'in_progress') return answers.inProgress;
    // Stale on arrival (spec rule 4): answered, marked done like a handled event, and never run.
    if (orderingKey !== undefined && ordering!.staleOnArrival(event, claim.watermark))
      return withBackground(answers.stale, claims.complete(event.id, claim.token));
    // Telemetry on: the delivery's trace link travels with the job, so its attempts (on any instance) link back.
    const trace = traceOf(delivery, telemetryFault);
    const job: QueuedEvent = trace === undefined ? { event, deliveryId } : { event, deliveryId, trace };
    return mode === 'queue' ? enqueue(job, claim.token) : inline.run(job, claim.token);
  };

  const internalError = (error: unknown): WebhookResponse => {
    logger.error({ err: error }, 'workforce-webhooks: unexpected failure while handling a delivery');
    return answers.internalError;
  };

  // Read before `handle` for telemetry; headers that cannot be read are `handle`'s to answer.
  const deliveryIdOf = (input: HandleInput): string | undefined => {
    try {
      return headerValue(input.headers, 'svc-delivery-id');
    } catch {
      return undefined;
    }
  };

  // `handle` that never throws or rejects: an unexpected failure of ours is answered 500 internal_error.
  const handleSafely = (input: HandleInput, delivery: DeliveryObserver | undefined): Answer => {
    let answer: Answer;
    try {
      answer = handle(input, delivery);
    } catch (error) {
      return internalError(error);
    }
    return answer instanceof Promise ? answer.catch(internalError) : answer;
  };
  return (input) =>
    telemetry === undefined
      ? handleSafely(input, undefined)
      : observeDelivery(
          telemetry,
          deliveryIdOf(input),
          (delivery) => handleSafely(input, delivery),
          telemetryFault,
        );
}
