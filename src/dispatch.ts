// Running an event's handlers: one attempt, failures reported to onError, and dead letters announced.
import type { ApiClient } from '../api/client.js';
import type { AttemptProcessor } from './attempt.js';
import { ALREADY_COMMITTED, DispatchContext, type DispatchShared } from './dispatch-context.js';
import { eventLogFields } from './envelope.js';
import { type KeepsSuccesses, keepSuccesses } from './keep-successes.js';
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
import type { WorkforceEvent } from './types.js';

export { type KeepsSuccesses, keepSuccesses } from './keep-successes.js';

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
  const report = (error: unknown, event: WorkforceEvent, ctx: DispatchContext): void => {
    logger.warn(
      { ...eventLogFields(event), attempt: ctx.attempt, err: error },
      'workforce-webhooks: handler failed',
    );
    for (const hook of registry.errorHandlers) void (async () => hook(error, event))().catch(hookFailed);
  };

  const shared: DispatchShared = { logger, api, begin, report };

  // Resolves with no value on success, or with the failure: never rejects, so handlers run side by side.
  const run = async (
    { handler, index }: RegisteredHandler,
    job: KeepsSuccesses,
    ctx: DispatchContext,
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

  const failOne = async (error: unknown, event: WorkforceEvent, ctx: DispatchContext): Promise<void> => {
    if (error === ALREADY_COMMITTED) return;
    if (ctx.opened !== undefined) await ctx.end(true);
    report(error, event, ctx);
    throw new HandlerFailure([error], []);
  };

  // The one handler succeeded: commit its transaction, if it opened one; a failed commit fails the attempt.
  const succeedOne = (event: WorkforceEvent, ctx: DispatchContext): Promise<void> | undefined => {
    if (ctx.opened === undefined) return undefined;
    return ctx.end(false).catch((error: unknown) => failOne(error, event, ctx));
  };

  const processNow: AttemptProcessor = (job, attempt) => {
    const { event } = job;
    const handlers = registry.match(event.type);
    const done = job.completed ?? [];
    if (handlers.length !== 1 || done.length !== 0) return processAll(job, attempt, handlers, done);
    // The common case, one handler on its first attempt: no bookkeeping, and no promise when it returns none.
    const ctx = new DispatchContext(job.deliveryId, attempt, event, shared);
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
    const ctx = new DispatchContext(job.deliveryId, attempt, event, shared);
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
