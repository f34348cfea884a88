// createReceiver: the options checked, the parts wired into one receiver (handlers, the delivery path, close, dead letters).
import { createClaims } from './claims.js';
import {
  type BulkOptions,
  discardDeadLetters,
  type ReplayResult,
  replayDeadLetters,
} from './dead-letter-bulk.js';
import type { DeadLetterEvent, DeadLetterType } from './dead-letters.js';
import { createEnqueue } from './enqueue.js';
import { ConfigurationError, WebhookError } from './errors.js';
import { createInlineRunner } from './inline.js';
import { createWarnOnce, type Logger } from './logger.js';
import { type ReceiverOptions, resolveOptions } from './options.js';
import { startProcessing } from './processing.js';
import type {
  DeadLetter,
  DeadLetterFilter,
  DeadLetterPage,
  DeadLetterQuery,
  ReplayOptions,
} from './queue.js';
import { createFetch, type FetchPlatform } from './receiver-fetch.js';
import { createHandle, type HandleInput, type ReceiverState } from './receiver-handle.js';
import { createRefusalReport } from './refusal-report.js';
import { createRegistry } from './registry.js';
import type { WebhookResponse } from './responses.js';
import { holdStore, refuseHeldStore } from './store-owners.js';
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
import { createTypoCheck } from './unknown-type.js';

export type { ReceiverOptions } from './options.js';
export type { FetchPlatform } from './receiver-fetch.js';
export type { BodyProblem, HandleInput } from './receiver-handle.js';

// close() with no timeoutMs.
const DEFAULT_CLOSE_TIMEOUT_MS = 10_000;

// What replay() says when given neither an event id nor a dead letter: a queue would answer false, and the letter stay.
const NOT_A_LETTER =
  'replay takes a dead letter or its event id, as deadLetters() reads them: receiver.replay(letter) or receiver.replay(letter.event.id)';

// The letter's event id and failure time, or undefined for anything that is not a dead letter.
const letterOf = (given: unknown): { readonly id: string; readonly failedAt: number } | undefined => {
  if (typeof given !== 'object' || given === null) return undefined;
  const { event, failedAt } = given as {
    readonly event?: { readonly id?: unknown };
    readonly failedAt?: unknown;
  };
  return typeof event?.id === 'string' && typeof failedAt === 'number'
    ? { id: event.id, failedAt }
    : undefined;
};

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
  /**
   * The Web-standard adapter (Bun, Deno, Workers): `Request` in, `Response` out; Workers' own call shape
   * (`request, env, ctx`) works too, `ctx` kept as the platform.
   */
  fetch(request: Request, platform?: FetchPlatform): Promise<Response>;
  /**
   * Answers new deliveries 503 and drains; what cannot finish in `timeoutMs` (default 10 000; `Infinity`: wait for
   * the drain with no limit) is dead-lettered. Any other `timeoutMs` than 0 to 2^31 - 1 or `Infinity` (NaN, a
   * negative, not a number) rejects with a `ConfigurationError` and leaves the receiver open.
   */
  close(options?: { readonly timeoutMs?: number }): Promise<void>;
  /**
   * One page of the dead letters, newest first: `limit` (default 100, at most 1 000), and the `cursor` of the
   * page before to read the next; every dead letter stays kept until it is replayed. Each `event` is typed by the
   * map, narrowed by `event.type`; a `type` filter the map does not name (a typo) is a compile error.
   */
  deadLetters<const T extends string>(
    query?: DeadLetterQuery<DeadLetterType<M, T>>,
  ): Promise<DeadLetterPage<DeadLetterEvent<M>>>;
  /**
   * Runs a dead letter's handlers again, given its event id or the letter itself as `deadLetters()` read it or
   * `onDeadLetter` got it (then only that failure: false when it was replayed and failed again since); false when
   * there is no such dead letter (or another replay took it). Anything else rejects with a `ConfigurationError`.
   * With `{ platform: ctx }` (the request's, on Workers) the replayed event runs in that request, kept up by its
   * `waitUntil`.
   */
  replay(
    letter: string | Pick<DeadLetter<DeadLetterEvent<M>> | DeadLetter, 'event' | 'failedAt'>,
    options?: Pick<ReplayOptions, 'platform'>,
  ): Promise<boolean>;
  /**
   * Replays every dead letter that matches `filter` (`type` like `leave.*`, `since` / `until` on the last
   * failure), `concurrency` at a time; each runs once even when two calls or instances replay them together.
   */
  replayDeadLetters<const T extends string>(
    filter?: DeadLetterFilter<DeadLetterType<M, T>>,
    options?: BulkOptions,
  ): Promise<ReplayResult>;
  /** Drops every dead letter that matches `filter` for good; answers how many this call dropped. */
  discardDeadLetters<const T extends string>(
    filter?: DeadLetterFilter<DeadLetterType<M, T>>,
    options?: BulkOptions,
  ): Promise<number>;
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
export function createReceiver<M = EventDataMap>(options: ReceiverOptions): Receiver<M>;
// Last, so `ReturnType<typeof createReceiver>` is the receiver `createReceiver({ secret })` makes.
export function createReceiver(options: ReceiverOptions): Receiver;
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
  // Refused before anything starts (the queue's worker, the ordering), so a refused receiver leaves nothing behind.
  refuseHeldStore(store);
  const registry = createRegistry();
  const state: ReceiverState = { closing: false, handlersAdded: false };
  const warnOnce = createWarnOnce(logger);
  // A type meant that a handler takes is not ignored: the near name is one of the app's own beside it.
  const checkTypos = createTypoCheck((type) => registry.match(type).length > 0, warnOnce);
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
  let drained: Promise<void> | undefined;
  const enqueue = createEnqueue({
    queue,
    claims,
    queueTimeoutMs: rest.queueTimeoutMs,
    logger,
    warnOnce,
    closing: () => state.closing,
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

  const handle = createHandle({
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
  });

  // Every replay, one or in bulk, is reported to telemetry.
  const replay = async (eventId: string, options?: ReplayOptions): Promise<boolean> => {
    const replayed = await queue.replay(eventId, options);
    if (replayed) telemetry?.replayed?.(eventId);
    return replayed;
  };

  // Last, once nothing above threw: a receiver that could not be made holds no store.
  const giveBackStore = holdStore(store);
  const receiver: Receiver<M> = {
    maxBodyBytes,
    bodyTimeoutMs,
    logger,
    on(pattern, handler) {
      registry.add(pattern as string | readonly string[], handler as Handler);
      state.handlersAdded = true;
      // Where nothing checks types (tsx, plain JavaScript), a misspelt type would leave its deliveries ignored.
      checkTypos(typeof pattern === 'string' ? [pattern] : (pattern as readonly string[]));
      return this;
    },
    onAny(handler) {
      registry.add(null, handler as Handler);
      state.handlersAdded = true;
      return this;
    },
    onError(handler) {
      registry.addErrorHandler(handler);
      return this;
    },
    handle(input) {
      const answer = handle(input);
      return answer instanceof Promise ? answer : Promise.resolve(answer);
    },
    fetch: createFetch({ handle, maxBodyBytes, bodyTimeoutMs, warnOnce }),
    // One drain for every call: a second close resolves when the first's drain ends, and so does the first.
    // `close(null)` from JavaScript is `close()`: a promise either way, never a synchronous TypeError.
    close(options) {
      const { timeoutMs = DEFAULT_CLOSE_TIMEOUT_MS } = options ?? {};
      const refused = closeTimeoutProblem(timeoutMs, 'close');
      if (refused !== undefined) return Promise.reject(refused);
      drained ??= (async () => {
        state.closing = true;
        // One deadline for the whole drain: the queue gets what the inline runs left of it (Infinity stays Infinity).
        // On the monotonic clock: a wall clock stepped during the close would give the queue 1 ms, or an hour.
        const end = performance.now() + timeoutMs;
        const left = (): number => Math.max(1, end - performance.now());
        try {
          await inline.close(timeoutMs, new WebhookError('shutting_down', 'the receiver is closing'));
          await queue.close({ timeoutMs: left() });
        } finally {
          try {
            // A watermark write the store still refuses: the process may exit after this, and the key's lease lapse.
            // Also when the queue's close threw: ordering stops renewing the keys of runs that outlive the close.
            await ordering?.settled(left());
          } finally {
            // Closed, it takes no delivery any more: its store may serve the next receiver (a restart in the process).
            giveBackStore();
          }
        }
      })();
      return drained;
    },
    // A queue knows no map: its letters hold the events this receiver's handlers took, typed by the map as in on().
    deadLetters: (query) => queue.deadLetters(query) as Promise<DeadLetterPage<DeadLetterEvent<M>>>,
    // The letter itself, as read, is the natural call after deadLetters(): given to a queue as it is, it would be
    // answered false (no letter has that id) and the event left a dead letter with nobody told.
    replay(given, { platform } = {}) {
      if (typeof given === 'string') return replay(given, { platform });
      const letter = letterOf(given);
      if (letter === undefined) return Promise.reject(new ConfigurationError(NOT_A_LETTER));
      return replay(letter.id, { failedAt: letter.failedAt, platform });
    },
    replayDeadLetters: (filter, options) =>
      replayDeadLetters({ deadLetters: (query) => queue.deadLetters(query), replay }, filter, options),
    discardDeadLetters: (filter, options) => discardDeadLetters(queue, filter, options),
  };
  return receiver;
}
