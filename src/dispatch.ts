// Running an event's handlers: one attempt, failures reported to onError, and dead letters announced.
import type { ApiClient } from '../api/client.js';
import type { AttemptProcessor } from './attempt.js';
import { ConfigurationError } from './errors.js';
import type { Logger } from './logger.js';
import {
  type AttemptContext,
  type DeadLetter,
  HandlerFailure,
  type JobProcessor,
  type QueuedEvent,
} from './queue.js';
import type { RegisteredHandler, Registry } from './registry.js';
import type { HandlerContext, WorkforceEvent } from './types.js';

/** What `createDispatcher` needs. */
export interface DispatcherOptions {
  readonly registry: Registry;
  readonly logger: Logger;
  readonly api: ApiClient | undefined;
  readonly onDeadLetter: ((letter: DeadLetter) => unknown) | undefined;
}

/** The processor a queue runs jobs through, and the announcement of a dead letter. */
export interface Dispatcher {
  readonly process: JobProcessor;
  /** `process` answering without a promise when the handlers did (the in-process queue's hot path). */
  readonly processNow: AttemptProcessor;
  readonly deadLetter: (letter: DeadLetter) => Promise<void>;
}

const MISSING_API =
  'ctx.api needs a client: createReceiver({ secret, api: createApiClient({ apiKey, baseUrl }) })';

// A class, not an object literal with getters: one is made per attempt, and prototype getters cost nothing to set up.
class Context implements HandlerContext {
  readonly deliveryId: string | undefined;
  readonly logger: Logger;
  readonly #attempt: AttemptContext;
  readonly #api: ApiClient | undefined;

  constructor(
    deliveryId: string | undefined,
    attempt: AttemptContext,
    logger: Logger,
    api: ApiClient | undefined,
  ) {
    this.deliveryId = deliveryId;
    this.logger = logger;
    this.#attempt = attempt;
    this.#api = api;
  }

  get attempt(): number {
    return this.#attempt.attempt;
  }

  // Read on demand: the attempt makes its AbortController only when a handler asks for the signal.
  get signal(): AbortSignal {
    return this.#attempt.signal;
  }

  get api(): ApiClient {
    if (this.#api === undefined) throw new ConfigurationError(MISSING_API);
    return this.#api;
  }
}

/**
 * Builds the processor: every matching handler not yet done runs side by side; the failures are reported to
 * `onError` and thrown as one `HandlerFailure` that remembers which handlers succeeded.
 * @example
 * const { process, deadLetter } = createDispatcher({ registry, logger, api, onDeadLetter });
 */
export function createDispatcher({ registry, logger, api, onDeadLetter }: DispatcherOptions): Dispatcher {
  const reportError = async (error: unknown, event: WorkforceEvent): Promise<void> => {
    for (const handler of registry.errorHandlers) {
      try {
        await handler(error, event);
      } catch (hookError) {
        logger.error({ err: hookError }, 'workforce-webhooks: an onError handler threw');
      }
    }
  };

  // A handler failure goes to the log and to every onError handler, never into the answer.
  const report = async (error: unknown, event: WorkforceEvent, ctx: Context): Promise<void> => {
    logger.warn(
      { eventId: event.id, type: event.type, attempt: ctx.attempt, err: error },
      'workforce-webhooks: handler failed',
    );
    await reportError(error, event);
  };

  // Resolves with no value on success, or with the failure: never rejects, so handlers run side by side.
  const run = async (
    { handler }: RegisteredHandler,
    event: WorkforceEvent,
    ctx: Context,
  ): Promise<{ readonly error: unknown } | undefined> => {
    try {
      await handler(event, ctx);
      return undefined;
    } catch (error) {
      await report(error, event, ctx);
      return { error };
    }
  };

  const failOne = async (error: unknown, event: WorkforceEvent, ctx: Context): Promise<never> => {
    await report(error, event, ctx);
    throw new HandlerFailure([error], []);
  };

  const processNow: AttemptProcessor = (job, attempt) => {
    const { event } = job;
    const handlers = registry.match(event.type);
    const done = job.completed ?? [];
    if (handlers.length !== 1 || done.length !== 0) return processAll(job, attempt, handlers, done);
    // The common case, one handler on its first attempt: no bookkeeping, and no promise when it returns none.
    const ctx = new Context(job.deliveryId, attempt, logger, api);
    let result: unknown;
    try {
      result = handlers[0]!.handler(event, ctx);
    } catch (error) {
      return failOne(error, event, ctx);
    }
    if (typeof (result as PromiseLike<unknown> | undefined)?.then !== 'function') return undefined;
    return Promise.resolve(result).then(
      () => {},
      (error: unknown) => failOne(error, event, ctx),
    );
  };

  const processAll = async (
    job: QueuedEvent,
    attempt: AttemptContext,
    handlers: readonly RegisteredHandler[],
    done: readonly number[],
  ): Promise<void> => {
    const { event } = job;
    const ctx = new Context(job.deliveryId, attempt, logger, api);
    const outcomes = await Promise.all(
      handlers.map((entry) => (done.includes(entry.index) ? undefined : run(entry, event, ctx))),
    );
    const completed: number[] = [];
    const errors: unknown[] = [];
    outcomes.forEach((outcome, i) => {
      if (outcome === undefined) completed.push(handlers[i]!.index);
      else errors.push(outcome.error);
    });
    if (errors.length > 0) throw new HandlerFailure(errors, completed);
  };

  const process: JobProcessor = async (job, attempt) => processNow(job, attempt);

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

  return { process, processNow, deadLetter };
}
