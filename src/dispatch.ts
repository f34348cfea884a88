// Running an event's handlers: one attempt, failures reported to onError, and dead letters announced.
import type { ApiClient } from '../api/client.js';
import type { AttemptProcessor } from './attempt.js';
import { eventLogFields } from './envelope.js';
import { ConfigurationError, HandlerTimeoutError } from './errors.js';
import type { Logger } from './logger.js';
import {
  type AttemptContext,
  type AttemptWatcher,
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

/**
 * The key under which a durable queue gives a job it runs the function that keeps, as it happens, the success of one
 * of the event's handlers while others still run: a crash then cuts only those, and the next attempt (any instance)
 * skips the rest. It is called with the job and every handler that has succeeded so far (earlier attempts' too);
 * never for an event with one handler, nor for the last handler to settle (the attempt's outcome records that).
 * @example
 * (job.data as KeepsSuccesses)[keepSuccesses] = (job, completed) => void write(job, completed);
 */
export const keepSuccesses: unique symbol = Symbol('workforce-webhooks.keepSuccesses');

/** A job that may carry a queue's `keepSuccesses` function. */
export type KeepsSuccesses = QueuedEvent & {
  [keepSuccesses]?: (job: QueuedEvent, completed: readonly number[]) => void;
};

// What every attempt's context of one dispatcher shares: one field per context instead of one per member.
interface Shared {
  readonly logger: Logger;
  readonly api: ApiClient | undefined;
  readonly begin: DedupeStore['begin'];
  readonly report: (error: unknown, event: WorkforceEvent, ctx: Context) => void;
}

// A class, not an object literal with getters: one is made per attempt, and prototype getters cost nothing to set up.
// It is also the attempt's watcher: a cut (time limit, shutdown) asks it which handlers still ran and which succeeded.
class Context implements HandlerContext, AttemptWatcher {
  readonly deliveryId: string | undefined;
  readonly logger: Logger;
  readonly #attempt: AttemptContext;
  readonly #event: WorkforceEvent;
  readonly #shared: Shared;
  /** The attempt's transaction, once a handler asked for it. */
  opened: Promise<EventTransaction | 'committed'> | undefined;
  #ended = false;
  // Handlers of the attempt not settled yet, and the indexes of those that succeeded (with those done in earlier
  // attempts) as they settle; undefined when none may be kept. Set by `track`, only once handlers are pending.
  #running = 0;
  #completed: number[] | undefined;

  constructor(
    deliveryId: string | undefined,
    attempt: AttemptContext,
    event: WorkforceEvent,
    shared: Shared,
  ) {
    this.deliveryId = deliveryId;
    this.logger = shared.logger;
    this.#attempt = attempt;
    this.#event = event;
    this.#shared = shared;
  }

  /** `running` handlers are pending: the attempt asks this context if it is cut short before they settle. */
  track(running: number, completed: number[] | undefined): void {
    this.#running = running;
    this.#completed = completed;
    this.#attempt.watch?.(this);
  }

  /**
   * One pending handler settled; `index` when it succeeded. Returns the handlers succeeded so far when this success
   * is worth keeping at once: others still run, and no transaction would roll it back.
   */
  settled(index?: number): readonly number[] | undefined {
    this.#running--;
    if (index === undefined || this.#completed === undefined) return undefined;
    this.#completed.push(index);
    return this.#running > 0 ? this.#completed : undefined;
  }

  cut(reason: unknown): readonly number[] | undefined {
    // A handler past its time limit failed the attempt as one that threw does: logged and given to onError, once
    // for the attempt however many of its handlers still ran. A shutdown is no handler failure.
    if (reason instanceof HandlerTimeoutError && this.#running > 0)
      this.#shared.report(reason, this.#event, this);
    return this.#completed;
  }

  transaction(): Promise<HandlerTransaction> {
    const { begin } = this.#shared;
    if (begin === undefined) return Promise.reject(new ConfigurationError(MISSING_TRANSACTIONS));
    if (this.opened === undefined) {
      // The attempt's signal: a wait for the event's turn stops, and gives its connection back, once the attempt ends.
      const opened = begin(this.#event.id, this.#attempt.signal);
      this.opened = opened;
      // A cut rolls the transaction back, and with it the writes of the handlers that succeeded: none is kept.
      this.#completed = undefined;
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
    const { api } = this.#shared;
    if (api === undefined) throw new ConfigurationError(MISSING_API);
    return api;
  }
}

/**
 * Builds the processor: every matching handler not yet done runs side by side; the failures are reported to
 * `onError` and thrown as one `HandlerFailure` that remembers which handlers succeeded. An attempt cut short (its
 * time limit, a shutdown) learns from the attempt's context which had succeeded by then, and a time limit is
 * reported like any handler failure.
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
  const hookFailed = (hookError: unknown): void =>
    logger.error({ err: hookError }, 'workforce-webhooks: an onError handler threw');

  // A handler failure goes to the log and to every onError handler, never into the answer. The hooks run detached,
  // each on its own: the attempt's outcome and duration are its handlers' alone, so a slow error tracker can neither
  // hold the queue's slot nor turn the failure into a time limit, and a hook that throws fails nothing.
  const report = (error: unknown, event: WorkforceEvent, ctx: Context): void => {
    logger.warn(
      { ...eventLogFields(event), attempt: ctx.attempt, err: error },
      'workforce-webhooks: handler failed',
    );
    for (const hook of registry.errorHandlers) void (async () => hook(error, event))().catch(hookFailed);
  };

  const shared: Shared = { logger, api, begin, report };

  // Resolves with no value on success, or with the failure: never rejects, so handlers run side by side.
  const run = async (
    { handler, index }: RegisteredHandler,
    job: KeepsSuccesses,
    ctx: Context,
  ): Promise<{ readonly error: unknown } | undefined> => {
    const { event } = job;
    try {
      await handler(event, ctx);
    } catch (error) {
      if (error !== ALREADY_COMMITTED) {
        ctx.settled();
        report(error, event, ctx);
        return { error };
      }
    }
    const completed = ctx.settled(index);
    // Kept by the queue as it happens, not only when the attempt fails: a crash gives no attempt the chance to.
    if (completed !== undefined) job[keepSuccesses]?.(job, completed);
    return undefined;
  };

  const failOne = async (error: unknown, event: WorkforceEvent, ctx: Context): Promise<void> => {
    if (error === ALREADY_COMMITTED) return;
    if (ctx.opened !== undefined) await ctx.end(true);
    report(error, event, ctx);
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
    const ctx = new Context(job.deliveryId, attempt, event, shared);
    let result: unknown;
    let then: unknown;
    try {
      result = handlers[0]!.handler(event, ctx);
      // Inside the try: reading `then` runs the result's code (a getter, a Proxy), and a throw there is the
      // handler's failure, as it is when `await` reads it on the path of several handlers.
      then = (result as PromiseLike<unknown> | undefined)?.then;
    } catch (error) {
      return failOne(error, event, ctx);
    }
    if (typeof then !== 'function') return succeedOne(event, ctx);
    // Pending: a cut reports it. Nothing to keep from it, as a success ends the attempt.
    ctx.track(1, undefined);
    return Promise.resolve(result).then(
      () => {
        ctx.settled();
        return succeedOne(event, ctx);
      },
      (error: unknown) => {
        ctx.settled();
        return failOne(error, event, ctx);
      },
    );
  };

  const processAll = async (
    job: QueuedEvent,
    attempt: AttemptContext,
    handlers: readonly RegisteredHandler[],
    done: readonly number[],
  ): Promise<void> => {
    const { event } = job;
    const ctx = new Context(job.deliveryId, attempt, event, shared);
    // Filled as the handlers settle (`run`), so that an attempt cut short still keeps those that succeeded.
    const completed: number[] = [];
    for (const { index } of handlers) if (done.includes(index)) completed.push(index);
    if (completed.length < handlers.length) ctx.track(handlers.length - completed.length, completed);
    const outcomes = await Promise.all(
      handlers.map((entry) => (done.includes(entry.index) ? undefined : run(entry, job, ctx))),
    );
    const errors: unknown[] = [];
    for (const outcome of outcomes) if (outcome !== undefined) errors.push(outcome.error);
    if (ctx.opened === undefined) {
      if (errors.length > 0) throw new HandlerFailure(errors, completed);
      return;
    }
    // One transaction for the attempt: it commits only if every handler succeeded, and a rollback undoes the
    // writes of those that did, so they all run again.
    try {
      await ctx.end(errors.length > 0);
    } catch (error) {
      report(error, event, ctx);
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
