// createReceiver: verify, parse, dedupe, queue or run inline, and answer from the status table.
import type { ApiClient } from '../api/client.js';
import { readRequestBody } from './body.js';
import { CURRENT_API_VERSION, parseEvent } from './envelope.js';
import { ConfigurationError, HandlerTimeoutError, WebhookError, WebhookVerificationError } from './errors.js';
import type { HeadersInput } from './headers.js';
import { headerValue } from './headers.js';
import { createWarnOnce, type Logger, silentLogger } from './logger.js';
import { createMemoryQueue } from './memory-queue.js';
import {
  type AttemptContext,
  type DeadLetter,
  type EventQueue,
  HandlerFailure,
  type QueuedEvent,
} from './queue.js';
import { createRegistry } from './registry.js';
import { answers, type WebhookResponse, withBackground } from './responses.js';
import { type Secret, secretList, verifySignature } from './signature.js';
import { createMemoryStore, DEFAULT_DONE_TTL_MS, type DedupeStore } from './store.js';
import type {
  ErrorHandler,
  EventDataMap,
  EventName,
  EventOf,
  EventPattern,
  Handler,
  HandlerContext,
  TypesOf,
  WorkforceEvent,
} from './types.js';

/** Options of `createReceiver`. */
export interface ReceiverOptions {
  /** The endpoint's signing secret (`whsec_...`), or several during rotation. */
  readonly secret: Secret;
  /** Largest allowed clock difference with the signature's `t`, both ways. Default 300. */
  readonly toleranceSeconds?: number;
  /** The clock, in milliseconds like `Date.now`. */
  readonly now?: () => number;
  /** Where event ids are remembered. Default `createMemoryStore()`; several instances: `createRedisStore()`. */
  readonly store?: DedupeStore;
  /** Where accepted events wait. Default `createMemoryQueue()`; durable: `createBullmqQueue()`. */
  readonly queue?: EventQueue;
  /** `queue` (default): answer 202 at once, handlers run from the queue. `inline`: run handlers before answering. */
  readonly mode?: 'queue' | 'inline';
  /** Inline mode: answer 202 after this long and let the run finish in the background. Default 8000 (the sender waits 10 s). */
  readonly ackDeadlineMs?: number;
  /** Inline mode: one run's time limit; a run past it is aborted and handed to the queue. Default 30 000. */
  readonly handlerTimeoutMs?: number;
  /** Bodies over this many bytes are refused with 413. Default 1 MiB. */
  readonly maxBodyBytes?: number;
  /** pino-shaped; silent by default. Never given bodies or secrets. */
  readonly logger?: Logger;
  /** Called with every event whose handlers failed every attempt. */
  readonly onDeadLetter?: (letter: DeadLetter) => unknown;
  /** How long a claim holds before another delivery may take it over; renewed while handlers run. Default 30 000. */
  readonly leaseMs?: number;
  /** How long a done id is remembered. Default 72 h (longer than the sender's two days of retries). */
  readonly doneTtlMs?: number;
  /** A read-API client (`createApiClient` from `workforce-webhooks/api`), handed to handlers as `ctx.api`. */
  readonly api?: ApiClient;
}

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

type Outcome = { readonly ok: true } | { readonly ok: false; readonly error: unknown };
const both = (a: Promise<unknown>, b: Promise<unknown>): Promise<void> => Promise.all([a, b]).then(() => {});
const DEADLINE = Symbol('deadline');

/**
 * Creates a receiver for the Workforce Service's signed webhooks.
 * @example
 * const receiver = createReceiver({ secret: process.env.WORKFORCE_WEBHOOK_SECRET! });
 * receiver.on('leave.approved', async (event) => calendar.block(event.data.employeeId, event.data.startDate));
 */
export function createReceiver<M = EventDataMap>(options: ReceiverOptions): Receiver<M> {
  const {
    secret,
    toleranceSeconds = 300,
    now = Date.now,
    store = createMemoryStore({ now }),
    queue = createMemoryQueue(),
    mode = 'queue',
    ackDeadlineMs = 8000,
    handlerTimeoutMs = 30_000,
    maxBodyBytes = 1024 * 1024,
    logger = silentLogger,
    onDeadLetter,
    leaseMs = 30_000,
    doneTtlMs = DEFAULT_DONE_TTL_MS,
    api,
  } = options ?? ({} as ReceiverOptions);
  const secrets = secretList(secret);
  if (mode !== 'queue' && mode !== 'inline') throw new ConfigurationError(`mode must be 'queue' or 'inline'`);
  for (const [name, value] of Object.entries({
    toleranceSeconds,
    ackDeadlineMs,
    handlerTimeoutMs,
    maxBodyBytes,
    leaseMs,
    doneTtlMs,
  })) {
    if (!Number.isFinite(value) || value <= 0)
      throw new ConfigurationError(`${name} must be a positive number`);
  }
  const registry = createRegistry();
  const warnOnce = createWarnOnce(logger);
  const inlineRuns = new Set<{ controller: AbortController; done: Promise<unknown> }>();
  let closing = false;

  const reportError = async (error: unknown, event: WorkforceEvent | undefined): Promise<void> => {
    for (const handler of registry.errorHandlers) {
      try {
        await handler(error, event);
      } catch (hookError) {
        logger.error({ err: hookError }, 'workforce-webhooks: an onError handler threw');
      }
    }
  };

  // One attempt: every matching handler that has not yet succeeded, side by side.
  const processJob = async (job: QueuedEvent, attempt: AttemptContext): Promise<void> => {
    const { event } = job;
    const ctx: HandlerContext = {
      deliveryId: job.deliveryId,
      attempt: attempt.attempt,
      signal: attempt.signal,
      logger,
      get api() {
        if (api === undefined) {
          throw new ConfigurationError(
            'ctx.api needs a client: createReceiver({ secret, api: createApiClient({ apiKey, baseUrl }) })',
          );
        }
        return api;
      },
    };
    const completed = [...(job.completed ?? [])];
    const errors: unknown[] = [];
    await Promise.all(
      registry.match(event.type).map(async ({ index, handler }) => {
        if (completed.includes(index)) return;
        try {
          await handler(event, ctx);
          completed.push(index);
        } catch (error) {
          errors.push(error);
          logger.warn(
            { eventId: event.id, type: event.type, attempt: attempt.attempt, err: error },
            'workforce-webhooks: handler failed',
          );
          await reportError(error, event);
        }
      }),
    );
    if (errors.length > 0) throw new HandlerFailure(errors, completed);
  };

  const deadLetter = async (letter: DeadLetter): Promise<void> => {
    logger.error(
      { eventId: letter.event.id, type: letter.event.type, attempts: letter.attempts, err: letter.error },
      'workforce-webhooks: event dead-lettered after its last attempt',
    );
    try {
      await onDeadLetter?.(letter);
    } catch (error) {
      logger.error({ err: error }, 'workforce-webhooks: onDeadLetter threw');
    }
  };

  queue.start({ process: processJob, onDeadLetter: deadLetter, logger });

  const release = (id: string, token: string): Promise<unknown> =>
    store
      .release(id, token)
      .catch((error) =>
        logger.error({ eventId: id, err: error }, 'workforce-webhooks: could not release a claim'),
      );
  // Never rejects: a failure to mark an id done is logged, and never changes an answer.
  const complete = (id: string, token: string): Promise<void> =>
    store.complete(id, token, doneTtlMs).then(
      (held) => {
        if (!held)
          logger.warn(
            { eventId: id },
            'workforce-webhooks: the claim expired before the event was marked done',
          );
      },
      (error) => {
        logger.error({ eventId: id, err: error }, 'workforce-webhooks: could not mark an event done');
      },
    );

  const enqueue = async (job: QueuedEvent, id: string, token: string): Promise<WebhookResponse> => {
    let result: Awaited<ReturnType<EventQueue['enqueue']>>;
    try {
      result = await queue.enqueue(job);
    } catch (error) {
      await release(id, token);
      logger.error({ eventId: id, err: error }, 'workforce-webhooks: the queue refused the event');
      return closing ? answers.unavailable.shutting_down : answers.unavailable.queue_unavailable;
    }
    if (result.status === 'full') {
      await release(id, token);
      warnOnce(
        'queue_full',
        {},
        'workforce-webhooks: the queue is full; deliveries are answered 503 until it drains',
      );
      return answers.unavailable.queue_full;
    }
    // The answer does not wait on marking the id done (a failure there is only logged, never answered): one
    // store round trip before the 202 instead of two. The mark still runs before the platform may freeze us.
    const marked = complete(id, token);
    return withBackground(
      answers.accepted,
      result.settled === undefined ? marked : both(marked, result.settled),
    );
  };

  const runInline = async (job: QueuedEvent, id: string, token: string): Promise<WebhookResponse> => {
    const controller = new AbortController();
    const timeout = setTimeout(
      () => controller.abort(new HandlerTimeoutError(handlerTimeoutMs)),
      handlerTimeoutMs,
    );
    const renewal = setInterval(() => {
      store
        .renew(id, token, leaseMs)
        .catch((error) =>
          logger.warn({ eventId: id, err: error }, 'workforce-webhooks: lease renewal failed'),
        );
    }, leaseMs / 3);
    const aborted = new Promise<never>((_, reject) => {
      controller.signal.addEventListener('abort', () => reject(controller.signal.reason), { once: true });
    });
    const run: Promise<Outcome> = Promise.race([
      processJob(job, { attempt: 1, signal: controller.signal }),
      aborted,
    ]).then(
      () => ({ ok: true }),
      (error: unknown) => ({ ok: false, error }),
    );
    const entry = { controller, done: run };
    inlineRuns.add(entry);
    void run.finally(() => {
      clearTimeout(timeout);
      clearInterval(renewal);
      inlineRuns.delete(entry);
    });
    let deadline: ReturnType<typeof setTimeout> | undefined;
    const first = await Promise.race([
      run,
      new Promise<typeof DEADLINE>((r) => {
        deadline = setTimeout(r, ackDeadlineMs, DEADLINE);
      }),
    ]);
    clearTimeout(deadline);
    if (first !== DEADLINE) {
      if (first.ok) {
        await complete(id, token);
        return answers.processed;
      }
      await release(id, token);
      return answers.handlerFailed;
    }
    // Past the deadline: answer now, and let the queue own whatever is left (DESIGN "Processing modes").
    const background = run.then(async (outcome) => {
      if (outcome.ok) return void (await complete(id, token));
      const completed = outcome.error instanceof HandlerFailure ? outcome.error.completed : [];
      const handedOver = await enqueue({ ...job, attemptsMade: 1, completed }, id, token);
      if (handedOver.status !== 202) {
        await deadLetter({
          event: job.event,
          deliveryId: job.deliveryId,
          attempts: 1,
          error: outcome.error,
          failedAt: Date.now(),
        });
      }
    });
    return withBackground(answers.accepted, background);
  };

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

  const handle = async ({ method, headers, body, bodyProblem }: HandleInput): Promise<WebhookResponse> => {
    if (method !== undefined && method !== 'POST' && method.toUpperCase() !== 'POST')
      return answers.methodNotAllowed;
    if (closing) return answers.unavailable.shutting_down;
    if (bodyProblem !== undefined) return refuseBody(bodyProblem);
    if (body === undefined)
      return refuseBody({ kind: 'raw_body_unavailable', fix: 'pass the raw request bytes as `body`' });
    if (body.byteLength > maxBodyBytes) return answers.payloadTooLarge;
    const deliveryId = headerValue(headers, 'svc-delivery-id');
    try {
      await verifySignature({
        payload: body,
        header: headerValue(headers, 'svc-signature'),
        secret: secrets,
        toleranceSeconds,
        now,
      });
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
      logger.info({ code: error.code, deliveryId }, 'workforce-webhooks: delivery refused');
      return answers.badRequest[error.code];
    }
    let event: WorkforceEvent;
    try {
      event = parseEvent(body, headers);
    } catch (error) {
      logger.warn({ deliveryId, err: error }, 'workforce-webhooks: signed body is not a valid event');
      return answers.badRequest.invalid_payload;
    }
    if (event.apiVersion !== CURRENT_API_VERSION) {
      warnOnce(
        `api_version:${event.apiVersion}`,
        { apiVersion: event.apiVersion },
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
    let claim: Awaited<ReturnType<DedupeStore['claim']>>;
    try {
      claim = await store.claim(event.id, leaseMs);
    } catch (error) {
      logger.error({ eventId: event.id, err: error }, 'workforce-webhooks: the dedupe store is unreachable');
      return answers.unavailable.store_unavailable;
    }
    if (claim.status === 'done') return answers.duplicate;
    if (claim.status === 'in_progress') return answers.inProgress;
    const job: QueuedEvent = { event, deliveryId };
    return mode === 'queue' ? enqueue(job, event.id, claim.token) : runInline(job, event.id, claim.token);
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
    async handle(input) {
      try {
        return await handle(input);
      } catch (error) {
        logger.error({ err: error }, 'workforce-webhooks: unexpected failure while handling a delivery');
        return answers.internalError;
      }
    },
    async fetch(request, platform) {
      let response: WebhookResponse;
      if (request.method !== 'POST') response = answers.methodNotAllowed;
      else {
        const body = await readRequestBody(request, maxBodyBytes);
        response = await receiver.handle(
          typeof body === 'string'
            ? { method: request.method, headers: request.headers, bodyProblem: { kind: body } }
            : { method: request.method, headers: request.headers, body },
        );
      }
      if (response.background !== undefined) platform?.waitUntil?.(response.background);
      return new Response(response.body, { status: response.status, headers: response.headers });
    },
    async close({ timeoutMs = 10_000 } = {}) {
      closing = true;
      const runs = [...inlineRuns];
      let timer: ReturnType<typeof setTimeout> | undefined;
      const expired = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
      });
      await Promise.race([Promise.all(runs.map((run) => run.done)), expired]);
      clearTimeout(timer);
      for (const run of runs)
        run.controller.abort(new WebhookError('shutting_down', 'the receiver is closing'));
      await queue.close({ timeoutMs });
    },
    deadLetters: () => queue.deadLetters(),
    replay: (eventId) => queue.replay(eventId),
  };
  return receiver;
}
