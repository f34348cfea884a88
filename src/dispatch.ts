// Running an event's handlers: one attempt, failures reported to onError, and dead letters announced.
import type { ApiClient } from '../api/client.js';
import type { AttemptProcessor } from './attempt.js';
import { eventLogFields } from './envelope.js';
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
import type { DedupeStore } from './store.js';
import type { EventTransaction, HandlerTransaction } from './transaction.js';
import type { HandlerContext, WorkforceEvent } from './types.js';

/** What `createDispatcher` needs. */
export interface DispatcherOptions {
  readonly registry: Registry;
  readonly logger: Logger;
  readonly api: ApiClient | undefined;
  readonly onDeadLetter: ((letter: DeadLetter) => unknown) | undefined;
  /** The store's `begin`, for `ctx.transaction()`; undefined when the store has no transactions. */
  readonly begin?: DedupeStore['begin'];
}

/** The processor a queue runs jobs through, and the announcement of a dead letter. */
export interface Dispatcher {
  readonly process: JobProcessor;
  readonly deadLetter: (letter: DeadLetter) => Promise<void>;
}

const MISSING_API =
  'ctx.api needs a client: createReceiver({ secret, api: createApiClient({ apiKey, baseUrl }) })';
const MISSING_TRANSACTIONS =
  'ctx.transaction() needs a store with transactions: createReceiver({ secret, store: createPostgresStore({ pool }) })';

// Thrown to the handlers by `ctx.transaction()` when an earlier attempt already committed the event: the attempt
// then counts as a success, and nothing is reported.
const ALREADY_COMMITTED: Error = new Error('workforce-webhooks: this event was already committed');

type Begin = NonNullable<DedupeStore['begin']>;

// A class, not an object literal with getters: one is made per attempt, and prototype getters cost nothing to set up.
class Context implements HandlerContext {
  readonly deliveryId: string | undefined;
  readonly logger: Logger;
  readonly #attempt: AttemptContext;
  readonly #api: ApiClient | undefined;
  readonly #eventId: string;
  readonly #begin: Begin | undefined;
  /** The attempt's transaction, once a handler asked for it. */
  opened: Promise<EventTransaction | 'committed'> | undefined;
  #ended = false;

  constructor(
    deliveryId: string | undefined,
    attempt: AttemptContext,
    logger: Logger,
    api: ApiClient | undefined,
    eventId: string,
    begin: Begin | undefined,
  ) {
    this.deliveryId = deliveryId;
    this.logger = logger;
    this.#attempt = attempt;
    this.#api = api;
    this.#eventId = eventId;
    this.#begin = begin;
  }

  transaction(): Promise<HandlerTransaction> {
    if (this.#begin === undefined) return Promise.reject(new ConfigurationError(MISSING_TRANSACTIONS));
    if (this.opened === undefined) {
      const opened = this.#begin(this.#eventId);
      this.opened = opened;
      // A timeout or a shutdown ends the attempt while its handlers may still write: drop the transaction then.
      this.#attempt.signal.addEventListener(
        'abort',
        () => void opened.then((tx) => (tx === 'committed' ? undefined : tx.rollback(true))).catch(() => {}),
        { once: true },
      );
    }
    return this.opened.then((tx) => {
      if (tx === 'committed') throw ALREADY_COMMITTED;
      return tx.client;
    });
  }

  /** Commits the attempt's transaction when its handlers all succeeded, else rolls it back; rejects when the commit fails. */
  async end(failed: boolean): Promise<void> {
    if (this.#ended) return;
    this.#ended = true;
    let tx: EventTransaction | 'committed';
    try {
      tx = await this.opened!;
    } catch (error) {
      // The handlers saw `begin` fail (they failed with it, or caught it): the attempt fails.
      if (failed) return;
      throw error;
    }
    if (tx === 'committed') return;
    if (failed || this.#attempt.signal.aborted) await tx.rollback(false).catch(() => {});
    else await tx.commit();
  }

  get attempt(): number {
    return this.#attempt.attempt;
  }

  // Read on demand: the attempt makes its AbortController only when a handler asks for the signal.
  get signal(): AbortSignal {
    return this.#attempt.signal;
  }

  get orderingKey(): string | undefined {
    return this.#attempt.orderingKey;
  }

  get stale(): boolean {
    return this.#attempt.stale === true;
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
export function createDispatcher({
  registry,
  logger,
  api,
  onDeadLetter,
  begin,
}: DispatcherOptions): Dispatcher {
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
      { ...eventLogFields(event), attempt: ctx.attempt, err: error },
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
      if (error === ALREADY_COMMITTED) return undefined;
      await report(error, event, ctx);
      return { error };
    }
  };

  const failOne = async (error: unknown, event: WorkforceEvent, ctx: Context): Promise<void> => {
    if (error === ALREADY_COMMITTED) return;
    if (ctx.opened !== undefined) await ctx.end(true);
    await report(error, event, ctx);
    throw new HandlerFailure([error], []);
  };

  // The one handler succeeded: commit its transaction, if it opened one; a failed commit fails the attempt.
  const succeedOne = (event: WorkforceEvent, ctx: Context): Promise<void> | undefined => {
    if (ctx.opened === undefined) return undefined;
    return ctx.end(false).catch((error: unknown) => failOne(error, event, ctx));
  };

  const processNow: AttemptProcessor = (job, attempt) => {
    const { event } = job;
    const handlers = registry.match(event.type);
    const done = job.completed ?? [];
    if (handlers.length !== 1 || done.length !== 0) return processAll(job, attempt, handlers, done);
    // The common case, one handler on its first attempt: no bookkeeping, and no promise when it returns none.
    const ctx = new Context(job.deliveryId, attempt, logger, api, event.id, begin);
    let result: unknown;
    try {
      result = handlers[0]!.handler(event, ctx);
    } catch (error) {
      return failOne(error, event, ctx);
    }
    if (typeof (result as PromiseLike<unknown> | undefined)?.then !== 'function')
      return succeedOne(event, ctx);
    return Promise.resolve(result).then(
      () => succeedOne(event, ctx),
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
    const ctx = new Context(job.deliveryId, attempt, logger, api, event.id, begin);
    const outcomes = await Promise.all(
      handlers.map((entry) => (done.includes(entry.index) ? undefined : run(entry, event, ctx))),
    );
    const completed: number[] = [];
    const errors: unknown[] = [];
    outcomes.forEach((outcome, i) => {
      if (outcome === undefined) completed.push(handlers[i]!.index);
      else errors.push(outcome.error);
    });
    if (ctx.opened === undefined) {
      if (errors.length > 0) throw new HandlerFailure(errors, completed);
      return;
    }
    // One transaction for the attempt: it commits only if every handler succeeded, and a rollback undoes the
    // writes of those that did, so they all run again.
    try {
      await ctx.end(errors.length > 0);
    } catch (error) {
      await report(error, event, ctx);
      errors.push(error);
    }
    if (errors.length > 0) throw new HandlerFailure(errors, []);
  };

  const process: JobProcessor = async (job, attempt) => processNow(job, attempt);

  const deadLetter = async (letter: DeadLetter): Promise<void> => {
    logger.error(
      { ...eventLogFields(letter.event), attempts: letter.attempts, err: letter.error },
      'workforce-webhooks: event dead-lettered after its last attempt',
    );
    try {
      await onDeadLetter?.(letter);
    } catch (error) {
      logger.error({ err: error }, 'workforce-webhooks: onDeadLetter threw');
    }
  };

  return { process, deadLetter };
}
