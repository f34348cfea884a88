// createReceiver: verify, parse, dedupe, then queue or run inline, and answer from the status table.
import { readRequestBody } from './body.js';
import { createClaims } from './claims.js';
import {
  type BulkOptions,
  discardDeadLetters,
  type ReplayResult,
  replayDeadLetters,
} from './dead-letter-bulk.js';
import { withDeadline } from './deadline.js';
import { createDispatcher } from './dispatch.js';
import { CURRENT_API_VERSION, eventLogFields, loggableApiVersion, parseEvent } from './envelope.js';
import { WebhookError, WebhookVerificationError } from './errors.js';
import { type HeadersInput, headerValue } from './headers.js';
import { createInlineRunner } from './inline.js';
import { createWarnOnce, type Logger } from './logger.js';
import { type ReceiverOptions, resolveOptions } from './options.js';
import { createOrdering } from './ordering.js';
import type {
  DeadLetter,
  DeadLetterFilter,
  DeadLetterPage,
  DeadLetterQuery,
  EnqueueResult,
  QueuedEvent,
  ReplayOptions,
} from './queue.js';
import { createRefusalReport } from './refusal-report.js';
import { createRegistry } from './registry.js';
import { acceptedWithWork, answers, type WebhookResponse, withBackground } from './responses.js';
import { NOT_CONFIGURED } from './secret-source.js';
import { checkSignature, type ParsedSignature } from './signature.js';
import type { ClaimResult } from './store.js';
import type { DeliveryObserver } from './telemetry.js';
import { observeAttempts } from './telemetry-attempts.js';
import { observeClaim, observeDelivery, observeEvent, traceOf } from './telemetry-delivery.js';
import { guardTelemetry } from './telemetry-guard.js';
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

export type { ReceiverOptions } from './options.js';

// What `receiver.fetch` logs when the Request's body was read before it.
const FETCH_FIX =
  'pass the Request to receiver.fetch (or to the Next route handler) unread: nothing may call request.text(), request.json() or request.arrayBuffer() before it (to look at the body first, read a request.clone())';

/** An answer now, or once a store, queue or Web Crypto has answered. */
type Answer = WebhookResponse | Promise<WebhookResponse>;

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

/** Platform hooks for `receiver.fetch` (Workers' `ctx.waitUntil`). */
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
  /** Answers new deliveries 503 and drains; what cannot finish in `timeoutMs` (default 10 000) is dead-lettered. */
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
  const { storeTimeoutMs, queueTimeoutMs } = rest;
  const registry = createRegistry();
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
    timeoutMs: storeTimeoutMs,
  });
  const dispatcher = createDispatcher({
    registry,
    logger,
    api: rest.api,
    onDeadLetter: rest.onDeadLetter,
    begin: store.begin === undefined ? undefined : (eventId, signal) => store.begin!(eventId, signal),
  });
  const ordering =
    rest.ordering === undefined
      ? undefined
      : createOrdering({
          ...rest.ordering,
          store: store.ordering,
          shared: store.inProcess !== true,
          leaseMs,
          doneTtlMs: rest.doneTtlMs,
          logger,
          onStale:
            telemetry?.staleSkipped === undefined
              ? rest.onStale
              : (event, newer) => {
                  telemetry.staleSkipped!(event);
                  return rest.onStale?.(event, newer);
                },
        });
  const process =
    telemetry === undefined
      ? dispatcher.process
      : observeAttempts(dispatcher.process, telemetry, telemetryFault);
  const onRetry = telemetry?.retried?.bind(telemetry);
  const onLateReplay = telemetry?.replayed?.bind(telemetry);
  // Ordering on: a dead letter gives its key up first, so the newer events of its record go ahead.
  const deadLetter =
    ordering === undefined && telemetry?.deadLettered === undefined
      ? dispatcher.deadLetter
      : async (letter: DeadLetter): Promise<void> => {
          telemetry?.deadLettered?.(letter);
          await ordering?.deadLettered(letter);
          await dispatcher.deadLetter(letter);
        };
  queue.start(
    ordering === undefined
      ? { process, onDeadLetter: deadLetter, onRetry, onLateReplay, logger }
      : {
          process: ordering.wrap(process, queue.inProcess === true ? 'local' : 'durable'),
          onDeadLetter: deadLetter,
          onRetry,
          onLateReplay,
          logger,
        },
  );
  if (telemetry?.observeQueue !== undefined && queue.counts !== undefined)
    telemetry.observeQueue(() => queue.counts!());
  let closing = false;
  let drained: Promise<void> | undefined;

  // `failure`: an inline run's hand-over, the failure of its last attempt (see `EventQueue.enqueue`).
  const enqueue = (job: QueuedEvent, token: string, failure?: unknown): Answer => {
    let result: Promise<EnqueueResult>;
    let late = false;
    try {
      result = queue.inProcess
        ? queue.enqueue(job, failure)
        : withDeadline(
            () => queue.enqueue(job, failure),
            queueTimeoutMs,
            'queue_unavailable',
            (pending) => {
              late = true;
              settleLateEnqueue(job, token, pending);
            },
          );
    } catch (error) {
      return refusedByQueue(job, token, error, true);
    }
    return result.then(
      (held) => queued(job, token, held),
      (error: unknown) => refusedByQueue(job, token, error, !late),
    );
  };

  // An enqueue past its deadline may still land (a silent Redis that wakes up runs the commands it holds). The
  // claim is kept until it is known: a job that landed owns the event, so the id is marked done and the sender's
  // retry is a duplicate; one that failed gives the claim up for the retry. Either way the event runs once.
  const settleLateEnqueue = (job: QueuedEvent, token: string, pending: Promise<EnqueueResult>): void => {
    const id = job.event.id;
    void pending.then(
      (held) => (held.status === 'queued' ? claims.complete(id, token) : claims.release(id, token)),
      () => claims.release(id, token),
    );
  };

  // A refused event's claim goes, so the sender's retry can take it; but not an inline run's hand-over (attempts
  // made, already answered 2xx): the inline runner still owns that claim, asks again, and gives it up itself.
  const giveUpClaim = (job: QueuedEvent, token: string): Promise<void> | undefined =>
    job.attemptsMade !== undefined && job.attemptsMade > 0 ? undefined : claims.release(job.event.id, token);

  // The claim is released in the background: a store that stopped answering too must not hold the 503.
  const refusedByQueue = (
    job: QueuedEvent,
    token: string,
    error: unknown,
    release: boolean,
  ): WebhookResponse => {
    const id = job.event.id;
    const released = release ? giveUpClaim(job, token) : undefined;
    logger.error({ eventId: id, err: error }, 'workforce-webhooks: the queue refused the event');
    return withBackground(
      closing ? answers.unavailable.shutting_down : answers.unavailable.queue_unavailable,
      released,
    );
  };

  const queued = (job: QueuedEvent, token: string, result: EnqueueResult): Answer => {
    const id = job.event.id;
    if (result.status === 'full') {
      warnOnce(
        'queue_full',
        {},
        'workforce-webhooks: the queue is full; deliveries are answered 503 until it drains',
      );
      const released = giveUpClaim(job, token);
      return released === undefined
        ? answers.unavailable.queue_full
        : released.then(() => answers.unavailable.queue_full);
    }
    // The queue owns the event now. Marking the id done is not awaited (a failure there is only logged): one
    // store round trip before the 202 instead of two; the mark is part of the background work.
    return acceptedWithWork(claims.complete(id, token), result);
  };

  const inline = createInlineRunner({
    process: ordering === undefined ? process : ordering.wrap(process, 'inline'),
    claims,
    ackDeadlineMs: rest.ackDeadlineMs,
    handlerTimeoutMs: rest.handlerTimeoutMs,
    handOver: enqueue,
    deadLetter,
    onRetry,
  });

  const refuseBody = (problem: BodyProblem): WebhookResponse => {
    if (problem.kind === 'too_large') return answers.payloadTooLarge;
    if (problem.kind === 'timeout') return answers.bodyTimeout;
    if (problem.kind === 'unreadable') return answers.badRequest.invalid_payload;
    warnOnce(
      'raw_body_unavailable',
      { fix: problem.fix },
      `workforce-webhooks: the request body was already parsed, so its signature cannot be checked. Fix: ${problem.fix}`,
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
      return answers.ignored;
    }
    // Inline: a copy of an event this process is running is in progress whatever the store says (its lease may
    // have lapsed while a handler held the event loop; the next renewal takes it back).
    if (mode === 'inline' && inline.running(event.id)) return answers.inProgress;
    // Ordering on: the claim also reads the key's watermark, in the same store step.
    const orderingKey = ordering === undefined ? undefined : ordering.keyOf(event);
    let claim: Promise<ClaimResult>;
    try {
      // An in-process store cannot stall: no deadline, and none of its timer and promises.
      claim = store.inProcess
        ? store.claim(event.id, leaseMs, orderingKey)
        : withDeadline(
            () => store.claim(event.id, leaseMs, orderingKey),
            storeTimeoutMs,
            'store_unavailable',
            (pending) => releaseLateClaim(event.id, pending),
          );
    } catch (error) {
      return storeDown(event, error);
    }
    return claim.then(
      (result) => claimed(event, deliveryId, result, orderingKey, delivery),
      (error: unknown) => storeDown(event, error),
    );
  };

  // A claim past its deadline may still land when the store wakes up: nobody will use it, so it is given up at
  // once rather than holding the sender's retries off (409) for a whole lease.
  const releaseLateClaim = (id: string, pending: Promise<ClaimResult>): void => {
    void pending.then(
      (late) => {
        if (late.status === 'claimed') claims.release(id, late.token);
      },
      () => {},
    );
  };

  const storeDown = (event: WorkforceEvent, error: unknown): WebhookResponse => {
    logger.error({ eventId: event.id, err: error }, 'workforce-webhooks: the dedupe store is unreachable');
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
      return this;
    },
    onAny(handler) {
      registry.add(null, handler as Handler);
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
      if (response.background !== undefined) platform?.waitUntil?.(response.background);
      return new Response(response.body, { status: response.status, headers: response.headers });
    },
    // One drain for every call: a second close resolves when the first's drain ends, and so does the first.
    close({ timeoutMs = 10_000 } = {}) {
      drained ??= (async () => {
        closing = true;
        // One deadline for the whole drain: the queue gets what the inline runs left of it.
        const end = Date.now() + timeoutMs;
        await inline.close(timeoutMs, new WebhookError('shutting_down', 'the receiver is closing'));
        await queue.close({ timeoutMs: Math.max(1, end - Date.now()) });
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
