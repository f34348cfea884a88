// createReceiver: verify, parse, dedupe, then queue or run inline, and answer from the status table.
import { readRequestBody } from './body.js';
import { createClaims } from './claims.js';
import { createDispatcher } from './dispatch.js';
import { CURRENT_API_VERSION, parseEvent } from './envelope.js';
import { WebhookError, WebhookVerificationError } from './errors.js';
import { type HeadersInput, headerValue } from './headers.js';
import { createInlineRunner } from './inline.js';
import { createWarnOnce, type Logger } from './logger.js';
import { type ReceiverOptions, resolveOptions } from './options.js';
import type { DeadLetter, EnqueueResult, QueuedEvent, QueueHooks } from './queue.js';
import { createRegistry } from './registry.js';
import { acceptedWithWork, answers, type WebhookResponse } from './responses.js';
import { checkSignature, type ParsedSignature } from './signature.js';
import type { ClaimResult } from './store.js';
import {
  type SyncHooks,
  type SyncQueue,
  type SyncReceiver,
  type SyncStore,
  syncFace,
  withSyncFace,
} from './sync.js';
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

/** Why an adapter has no raw body: too large, already parsed by something else (with the fix), or unreadable. */
export type BodyProblem =
  | { readonly kind: 'too_large' }
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
  deadLetters(): Promise<readonly DeadLetter[]>;
  /** Runs a dead letter's handlers again; false when there is no dead letter with that event id. */
  replay(eventId: string): Promise<boolean>;
  readonly maxBodyBytes: number;
  readonly logger: Logger;
}

/**
 * Creates a receiver for the Workforce Service's signed webhooks.
 * @example
 * const receiver = createReceiver({ secret: process.env.WORKFORCE_WEBHOOK_SECRET! });
 * receiver.on('leave.approved', async (event) => calendar.block(event.data.employeeId, event.data.startDate));
 */
export function createReceiver<M = EventDataMap>(options: ReceiverOptions): Receiver<M> {
  const { secrets, toleranceSeconds, now, store, queue, mode, maxBodyBytes, logger, leaseMs, ...rest } =
    resolveOptions(options);
  const registry = createRegistry();
  const warnOnce = createWarnOnce(logger);
  const claims = createClaims({ store, logger, leaseMs, doneTtlMs: rest.doneTtlMs });
  const { process, processNow, deadLetter } = createDispatcher({
    registry,
    logger,
    api: rest.api,
    onDeadLetter: rest.onDeadLetter,
  });
  queue.start(
    withSyncFace<QueueHooks, SyncHooks>(
      { process, onDeadLetter: deadLetter, logger },
      { process: processNow },
    ),
  );
  let closing = false;

  const syncStore = syncFace<SyncStore>(store);
  const syncQueue = syncFace<SyncQueue>(queue);

  // The queued path answers without a promise when the store and the queue are this package's in-process ones
  // and the signature is checked on node:crypto; a remote store or queue adds a `then` where it must wait.
  const enqueue = (job: QueuedEvent, token: string): Answer => {
    let result: EnqueueResult | Promise<EnqueueResult>;
    try {
      // Promise.resolve: a queue of the user's may answer with any thenable.
      result = syncQueue === undefined ? Promise.resolve(queue.enqueue(job)) : syncQueue.enqueue(job);
    } catch (error) {
      return refusedByQueue(job, token, error);
    }
    if (result instanceof Promise) {
      return result.then(
        (held) => queued(job, token, held),
        (error: unknown) => refusedByQueue(job, token, error),
      );
    }
    return queued(job, token, result);
  };

  const refusedByQueue = async (
    job: QueuedEvent,
    token: string,
    error: unknown,
  ): Promise<WebhookResponse> => {
    const id = job.event.id;
    await claims.release(id, token);
    logger.error({ eventId: id, err: error }, 'workforce-webhooks: the queue refused the event');
    return closing ? answers.unavailable.shutting_down : answers.unavailable.queue_unavailable;
  };

  const queued = (job: QueuedEvent, token: string, result: EnqueueResult): Answer => {
    const id = job.event.id;
    if (result.status === 'full') {
      warnOnce(
        'queue_full',
        {},
        'workforce-webhooks: the queue is full; deliveries are answered 503 until it drains',
      );
      const released = claims.release(id, token);
      const full = answers.unavailable.queue_full;
      return released === undefined ? full : released.then(() => full);
    }
    // The queue owns the event now. Marking the id done is not awaited (a failure there is only logged): one
    // store round trip before the 202 instead of two; the mark is part of the background work.
    return acceptedWithWork(claims.complete(id, token), result);
  };

  const inline = createInlineRunner({
    process,
    claims,
    ackDeadlineMs: rest.ackDeadlineMs,
    handlerTimeoutMs: rest.handlerTimeoutMs,
    handOver: enqueue,
    deadLetter,
  });

  const refuseBody = (problem: BodyProblem): WebhookResponse => {
    if (problem.kind === 'too_large') return answers.payloadTooLarge;
    if (problem.kind === 'unreadable') return answers.badRequest.invalid_payload;
    warnOnce(
      'raw_body_unavailable',
      { fix: problem.fix },
      `workforce-webhooks: the request body was already parsed, so its signature cannot be checked. Fix: ${problem.fix}`,
      'error',
    );
    return answers.rawBodyUnavailable;
  };

  // The hot path: one HMAC over the bytes as received, one JSON.parse, one claim, one enqueue. It answers
  // synchronously when every part can (node:crypto, in-process store and queue) and with a promise otherwise.
  const handle = ({ method, headers, body, bodyProblem }: HandleInput): Answer => {
    if (method !== undefined && method !== 'POST' && method.toUpperCase() !== 'POST')
      return answers.methodNotAllowed;
    if (closing) return answers.unavailable.shutting_down;
    if (bodyProblem !== undefined) return refuseBody(bodyProblem);
    if (body === undefined)
      return refuseBody({ kind: 'raw_body_unavailable', fix: 'pass the raw request bytes as `body`' });
    if (body.byteLength > maxBodyBytes) return answers.payloadTooLarge;
    const deliveryId = headerValue(headers, 'svc-delivery-id');
    let verified: ParsedSignature | Promise<ParsedSignature>;
    try {
      const header = headerValue(headers, 'svc-signature');
      verified = checkSignature(body, header, secrets, toleranceSeconds, now());
    } catch (error) {
      return refuseSignature(error, deliveryId);
    }
    if (verified instanceof Promise) {
      return verified.then(
        () => accept(body, headers, deliveryId),
        (error: unknown) => refuseSignature(error, deliveryId),
      );
    }
    return accept(body, headers, deliveryId);
  };

  const refuseSignature = (error: unknown, deliveryId: string | undefined): WebhookResponse => {
    if (!(error instanceof WebhookVerificationError)) throw error;
    logger.info({ code: error.code, deliveryId }, 'workforce-webhooks: delivery refused');
    return answers.badRequest[error.code];
  };

  const accept = (body: Uint8Array, headers: HeadersInput, deliveryId: string | undefined): Answer => {
    let event: WorkforceEvent;
    try {
      event = parseEvent(body, headers);
    } catch (error) {
      logger.warn({ deliveryId, err: error }, 'workforce-webhooks: signed body is not a valid event');
      return answers.badRequest.invalid_payload;
    }
    if (event.apiVersion !== CURRENT_API_VERSION) {
      const { apiVersion } = event;
      warnOnce(
        `api_version:${apiVersion}`,
        { apiVersion },
        'workforce-webhooks: unknown apiVersion, accepted',
      );
    }
    if (registry.match(event.type).length === 0) {
      logger.debug(
        { eventId: event.id, type: event.type },
        'workforce-webhooks: no handler for this type, ignored',
      );
      return answers.ignored;
    }
    let claim: ClaimResult | Promise<ClaimResult>;
    try {
      claim =
        syncStore === undefined
          ? Promise.resolve(store.claim(event.id, leaseMs))
          : syncStore.claim(event.id, leaseMs);
    } catch (error) {
      return storeDown(event, error);
    }
    if (claim instanceof Promise) {
      return claim.then(
        (result) => claimed(event, deliveryId, result),
        (error: unknown) => storeDown(event, error),
      );
    }
    return claimed(event, deliveryId, claim);
  };

  const storeDown = (event: WorkforceEvent, error: unknown): WebhookResponse => {
    logger.error({ eventId: event.id, err: error }, 'workforce-webhooks: the dedupe store is unreachable');
    return answers.unavailable.store_unavailable;
  };

  const claimed = (event: WorkforceEvent, deliveryId: string | undefined, claim: ClaimResult): Answer => {
    if (claim.status === 'done') return answers.duplicate;
    if (claim.status === 'in_progress') return answers.inProgress;
    const job: QueuedEvent = { event, deliveryId };
    return mode === 'queue' ? enqueue(job, claim.token) : inline.run(job, claim.token);
  };

  const internalError = (error: unknown): WebhookResponse => {
    logger.error({ err: error }, 'workforce-webhooks: unexpected failure while handling a delivery');
    return answers.internalError;
  };

  // `handle` that never throws or rejects: an unexpected failure of ours is answered 500 internal_error.
  const handleNow = (input: HandleInput): Answer => {
    let answer: Answer;
    try {
      answer = handle(input);
    } catch (error) {
      return internalError(error);
    }
    return answer instanceof Promise ? answer.catch(internalError) : answer;
  };

  const receiver: Receiver<M> = {
    maxBodyBytes,
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
      if (method !== 'POST') response = answers.methodNotAllowed;
      else {
        const body = await readRequestBody(request, maxBodyBytes);
        const answer = handleNow(
          typeof body === 'string'
            ? { method, headers, bodyProblem: { kind: body } }
            : { method, headers, body },
        );
        response = answer instanceof Promise ? await answer : answer;
      }
      if (response.background !== undefined) platform?.waitUntil?.(response.background);
      return new Response(response.body, { status: response.status, headers: response.headers });
    },
    async close({ timeoutMs = 10_000 } = {}) {
      closing = true;
      await inline.close(timeoutMs, new WebhookError('shutting_down', 'the receiver is closing'));
      await queue.close({ timeoutMs });
    },
    deadLetters: () => queue.deadLetters(),
    replay: (eventId) => queue.replay(eventId),
  };
  // Adapters of this package call `handleNow` directly (`answerOf`) and skip a promise per delivery.
  return withSyncFace<Receiver<M>, SyncReceiver>(receiver, { handle: handleNow });
}
