// createReceiver: verify, parse, dedupe, then queue or run inline, and answer from the status table.
import { readRequestBody } from './body.js';
import { createClaims } from './claims.js';
import {
  type BulkOptions,
  discardDeadLetters,
  type ReplayResult,
  replayDeadLetters,
} from './dead-letter-bulk.js';
import { createEnqueue } from './enqueue.js';
import { CURRENT_API_VERSION, eventLogFields, loggableApiVersion, parseEvent } from './envelope.js';
import { ConfigurationError, WebhookError, WebhookVerificationError } from './errors.js';
import { type HeadersInput, headerValue } from './headers.js';
import { createInlineRunner } from './inline.js';
import { createWarnOnce, type Logger } from './logger.js';
import { type ReceiverOptions, resolveOptions } from './options.js';
import { startProcessing } from './processing.js';
import type {
  DeadLetterFilter,
  DeadLetterPage,
  DeadLetterQuery,
  QueuedEvent,
  ReplayOptions,
} from './queue.js';
import { createRefusalReport } from './refusal-report.js';
import { createRegistry } from './registry.js';
import { type Answer, answers, toWebResponse, type WebhookResponse, withBackground } from './responses.js';
import { NOT_CONFIGURED } from './secret-source.js';
import { checkSignature, type ParsedSignature } from './signature.js';
import type { ClaimResult } from './store.js';
import type { DeliveryObserver } from './telemetry.js';
import { observeClaim, observeDelivery, observeEvent, traceOf } from './telemetry-delivery.js';
import { guardTelemetry } from './telemetry-guard.js';
import { closeTimeoutProblem } from './timer-limit.js';
import type {
  ErrorHandler,
  EventDataMap,
  EventName,
  EventOf,
  EventPattern,
  Handler,
  TypesOf,
  WorkforceEvent,
} from './types.js';
import { typoWarning } from './unknown-type.js';

export type { ReceiverOptions } from './options.js';

// What `receiver.fetch` logs when the Request's body was read before it.
const FETCH_FIX =
  'pass the Request to receiver.fetch (or to the Next route handler) unread: nothing may call request.text(), request.json() or request.arrayBuffer() before it (to look at the body first, read a request.clone())';
// What `receiver.fetch` logs when the platform's waitUntil throws (Workers' `ctx.waitUntil` called without its `ctx`).
const WAIT_UNTIL_FIX =
  'pass the platform context itself so that waitUntil keeps its `this`, e.g. receiver.fetch(request, ctx), not { waitUntil: ctx.waitUntil }';

// What a delivery answered 200 ignored before any handler was registered logs: the service never sends it again.
const NO_HANDLERS =
  'workforce-webhooks: a delivery came before any handler was registered, and was answered 200 ignored: the service does not send it again. Register every receiver.on() / onAny() before the app listens (before any await in its start-up)';

// close() with no timeoutMs.
const DEFAULT_CLOSE_TIMEOUT_MS = 10_000;

/** What adapters pass to `receiver.handle`. */
export interface HandleInput {
  /** Request method; anything but POST is answered 405. */
  readonly method?: string;
  readonly headers: HeadersInput;
  /** The raw body exactly as received. */
  readonly body?: Uint8Array;
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

/** Platform hooks for `receiver.fetch`: on Workers pass `ctx` itself, whose `waitUntil` is called on it. */
export interface FetchPlatform {
  readonly waitUntil?: (promise: Promise<unknown>) => void;
}

/** A webhook receiver: register handlers, mount it with an adapter (or call `fetch`), close it on shutdown. */
export interface Receiver<M = EventDataMap> {
  /** Runs `handler` for a type, several types, or a `prefix.*`; `event.data` is typed from the map. */
  on<const P extends EventPattern<M>>(
    pattern: P | readonly P[],
    handler: Handler<EventOf<M, TypesOf<M, P>>>,
  ): this;
  /** Runs `handler` for every event. */
  onAny(handler: Handler<EventOf<M, EventName<M>> | WorkforceEvent>): this;
  /** Called with every handler failure (each attempt). */
  onError(handler: ErrorHandler): this;
  /** The core: raw bytes and headers in, an answer from the status table out. */
  handle(input: HandleInput): Promise<WebhookResponse>;
  /** The Web-standard adapter (Bun, Deno, Workers): `Request` in, `Response` out. */
  fetch(request: Request, platform?: FetchPlatform): Promise<Response>;
  /**
   * Answers new deliveries 503 and drains; what cannot finish in `timeoutMs` (default 10 000; `Infinity`: wait for
   * the drain with no limit) is dead-lettered. Any other `timeoutMs` than 0 to 2^31 - 1 or `Infinity` (NaN, a
   * negative, not a number) rejects with a `ConfigurationError` and leaves the receiver open.
   */
  close(options?: { readonly timeoutMs?: number }): Promise<void>;
  /**
   * One page of the dead letters, newest first: `limit` (default 100, at most 1 000), and the `cursor` of the
   * page before to read the next; every dead letter stays kept until it is replayed.
   */
  deadLetters(query?: DeadLetterQuery): Promise<DeadLetterPage>;
  /** Runs a dead letter's handlers again; false when there is no dead letter with that event id (or another replay took it). */
  replay(eventId: string): Promise<boolean>;
  /**
   * Replays every dead letter that matches `filter` (`type` like `leave.*`, `since` / `until` on the last
   * failure), `concurrency` at a time; each runs once even when two calls or instances replay them together.
   */
  replayDeadLetters(filter?: DeadLetterFilter, options?: BulkOptions): Promise<ReplayResult>;
  /** Drops every dead letter that matches `filter` for good; answers how many this call dropped. */
  discardDeadLetters(filter?: DeadLetterFilter, options?: BulkOptions): Promise<number>;
  readonly maxBodyBytes: number;
  /** How long adapters wait for a whole body before answering 408. */
  readonly bodyTimeoutMs: number;
  readonly logger: Logger;
}

/**
 * Creates a receiver for the Workforce Service's signed webhooks.
 * @example
 * const receiver = createReceiver({ secret: process.env.WORKFORCE_WEBHOOK_SECRET! });
 * receiver.on('leave.approved', async (event) => calendar.block(event.data.employeeId, event.data.startDate));
 */
export function createReceiver<M = EventDataMap>(options: ReceiverOptions): Receiver<M> {
  const {
    secrets,
    toleranceSeconds,
    now,
    store,
    queue,
    mode,
    maxBodyBytes,
    bodyTimeoutMs,
    logger,
    leaseMs,
    ...rest
  } = resolveOptions(options);
  const registry = createRegistry();
  // Until the first on() / onAny(): a delivery ignored then is one the app meant to handle.
  let handlersAdded = false;
  const hasHandler = (type: string): boolean => registry.match(type).length > 0;
  const warnOnce = createWarnOnce(logger);
  // Telemetry that throws (a broken meter, a span processor's bug) is logged once per method and otherwise
  // ignored: it never changes an answer, fails an attempt, or stops a retry or a dead letter.
  const telemetryFault = (hook: string, error: unknown): void =>
    warnOnce(
      `telemetry:${hook}`,
      { hook, err: error },
      `workforce-webhooks: the telemetry threw in ${hook}; ignored (deliveries and handlers go on as without it). Check the OpenTelemetry SDK's span processors and metric readers, or your Telemetry object`,
    );
  const telemetry = rest.telemetry === undefined ? undefined : guardTelemetry(rest.telemetry, telemetryFault);
  const refusals = createRefusalReport({ logger, now });
  const claims = createClaims({
    store,
    logger,
    leaseMs,
    doneTtlMs: rest.doneTtlMs,
    timeoutMs: rest.storeTimeoutMs,
  });
  const { ordering, ...processing } = startProcessing({
    options: { ...rest, leaseMs },
    store,
    queue,
    registry,
    logger,
    telemetry,
    telemetryFault,
  });
  let closing = false;
  let drained: Promise<void> | undefined;
  const enqueue = createEnqueue({
    queue,
    claims,
    queueTimeoutMs: rest.queueTimeoutMs,
    logger,
    warnOnce,
    closing: () => closing,
  });

  const inline = createInlineRunner({
    process: processing.inline,
    claims,
    ackDeadlineMs: rest.ackDeadlineMs,
    handlerTimeoutMs: rest.handlerTimeoutMs,
    handOver: enqueue,
    deadLetter: processing.deadLetter,
    onRetry: processing.onRetry,
  });

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
  const handle = (
    { method, headers, body, bodyProblem }: HandleInput,
    delivery: DeliveryObserver | undefined,
  ): Answer => {
    if (method !== undefined && method !== 'POST' && method.toUpperCase() !== 'POST')
      return answers.methodNotAllowed;
    if (closing) return answers.unavailable.shutting_down;
    if (bodyProblem !== undefined) return refuseBody(bodyProblem);
    if (body === undefined)
      return refuseBody({ kind: 'raw_body_unavailable', fix: 'pass the raw request bytes as `body`' });
    if (body.byteLength > maxBodyBytes) return answers.payloadTooLarge;
    const secretsNow = secrets();
    if (secretsNow === undefined) {
      warnOnce('not_configured', {}, NOT_CONFIGURED, 'error');
      return answers.notConfigured;
    }
    const deliveryId = headerValue(headers, 'svc-delivery-id');
    let verified: ParsedSignature | Promise<ParsedSignature>;
    try {
      const header = headerValue(headers, 'svc-signature');
      verified = checkSignature(body, header, secretsNow, toleranceSeconds, now());
    } catch (error) {
      return refuseSignature(error, deliveryId);
    }
    if (verified instanceof Promise) {
      return verified.then(
        () => accept(body, headers, deliveryId, delivery),
        (error: unknown) => refuseSignature(error, deliveryId),
      );
    }
    return accept(body, headers, deliveryId, delivery);
  };

  const refuseSignature = (error: unknown, deliveryId: string | undefined): WebhookResponse => {
    if (!(error instanceof WebhookVerificationError)) throw error;
    logger.info({ code: error.code, deliveryId }, 'workforce-webhooks: delivery refused');
    refusals.refused(error.code);
    return answers.badRequest[error.code];
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
      if (!handlersAdded) warnOnce('no_handlers', {}, NO_HANDLERS);
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

  const storeDown = (event: WorkforceEvent, error: unknown): WebhookResponse => {
    // A store that says how it is set up wrong (a table never made) is not an outage: its error carries the fix.
    logger.error(
      { eventId: event.id, err: error },
      error instanceof ConfigurationError
        ? `workforce-webhooks: the dedupe store is not set up: ${error.message}`
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
  const handleNow = (input: HandleInput): Answer =>
    telemetry === undefined
      ? handleSafely(input, undefined)
      : observeDelivery(
          telemetry,
          deliveryIdOf(input),
          (delivery) => handleSafely(input, delivery),
          telemetryFault,
        );

  // The keep-alive is the platform's: when it throws (Workers' `ctx.waitUntil` lost its `this`), the delivery is still
  // answered as planned, as its event is already claimed and queued, and the fix is logged once.
  const keepAlive = (platform: FetchPlatform, background: Promise<void>): void => {
    try {
      platform.waitUntil!(background);
    } catch (error) {
      warnOnce(
        'wait_until_failed',
        { err: error, fix: WAIT_UNTIL_FIX },
        `workforce-webhooks: platform.waitUntil threw, so queued work is not kept alive past the answer. Fix: ${WAIT_UNTIL_FIX}`,
      );
    }
  };

  // Every replay, one or in bulk, is reported to telemetry.
  const replay = async (eventId: string, options?: ReplayOptions): Promise<boolean> => {
    const replayed = await queue.replay(eventId, options);
    if (replayed) telemetry?.replayed?.(eventId);
    return replayed;
  };

  const receiver: Receiver<M> = {
    maxBodyBytes,
    bodyTimeoutMs,
    logger,
    on(pattern, handler) {
      registry.add(pattern as string | readonly string[], handler as Handler);
      handlersAdded = true;
      // Where nothing checks types (tsx, plain JavaScript), a misspelt type would leave its deliveries ignored. A type
      // meant that a handler already takes is not ignored: the near name is one of the app's own beside it.
      for (const name of typeof pattern === 'string' ? [pattern] : (pattern as readonly string[])) {
        const typo = typoWarning(name, hasHandler);
        if (typo !== undefined) warnOnce(`type_typo:${name}`, { pattern: name }, typo);
      }
      return this;
    },
    onAny(handler) {
      registry.add(null, handler as Handler);
      handlersAdded = true;
      return this;
    },
    onError(handler) {
      registry.addErrorHandler(handler);
      return this;
    },
    handle(input) {
      const answer = handleNow(input);
      return answer instanceof Promise ? answer : Promise.resolve(answer);
    },
    async fetch(request, platform) {
      let response: WebhookResponse;
      const { method, headers } = request;
      // Not POST: the body is not read, and the answer (405) is still reported like every other.
      if (method !== 'POST') response = await handleNow({ method, headers });
      else {
        const body = await readRequestBody(request, maxBodyBytes, bodyTimeoutMs);
        const answer = handleNow(
          typeof body !== 'string'
            ? { method, headers, body }
            : // 'taken': something read the body first (request.text() in a wrapper, a logging middleware), so
              // the signed bytes are gone: the host's mistake, answered and logged with the fix, not a bad payload.
              {
                method,
                headers,
                bodyProblem:
                  body === 'taken' ? { kind: 'raw_body_unavailable', fix: FETCH_FIX } : { kind: body },
              },
        );
        response = answer instanceof Promise ? await answer : answer;
      }
      // `background` is read only for a platform that keeps work alive: reading it makes its promise.
      if (platform?.waitUntil !== undefined) {
        const background = response.background;
        if (background !== undefined) keepAlive(platform, background);
      }
      return toWebResponse(response);
    },
    // One drain for every call: a second close resolves when the first's drain ends, and so does the first.
    close({ timeoutMs = DEFAULT_CLOSE_TIMEOUT_MS } = {}) {
      const refused = closeTimeoutProblem(timeoutMs, 'close');
      if (refused !== undefined) return Promise.reject(refused);
      drained ??= (async () => {
        closing = true;
        // One deadline for the whole drain: the queue gets what the inline runs left of it (Infinity stays Infinity).
        const end = Date.now() + timeoutMs;
        await inline.close(timeoutMs, new WebhookError('shutting_down', 'the receiver is closing'));
        await queue.close({ timeoutMs: Math.max(1, end - Date.now()) });
        // A watermark write the store still refuses: the process may exit after this, and the key's lease lapse.
        await ordering?.settled(Math.max(1, end - Date.now()));
      })();
      return drained;
    },
    deadLetters: (query) => queue.deadLetters(query),
    replay,
    replayDeadLetters: (filter, options) =>
      replayDeadLetters({ deadLetters: (query) => queue.deadLetters(query), replay }, filter, options),
    discardDeadLetters: (filter, options) => discardDeadLetters(queue, filter, options),
  };
  return receiver;
}
