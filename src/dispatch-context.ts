// The context an attempt's handlers get (`ctx`): its signal, its API client, its transaction, and what it saw succeed.
import type { ApiClient } from '../api/client.js';
import { ConfigurationError, HandlerTimeoutError } from './errors.js';
import type { Logger } from './logger.js';
import type { AttemptContext, AttemptWatcher } from './queue.js';
import type { DedupeStore } from './store.js';
import type { EventTransaction, HandlerTransaction } from './transaction.js';
import type { HandlerContext, WorkforceEvent } from './types.js';

const MISSING_API =
  'ctx.api needs a client: createReceiver({ secret, api: createApiClient({ apiKey, baseUrl }) })';
const MISSING_TRANSACTIONS =
  'ctx.transaction() needs a store with transactions: createReceiver({ secret, store: createPostgresStore({ pool }) })';

/**
 * Thrown to the handlers by `ctx.transaction()` when an earlier attempt already committed the event: the attempt
 * then counts as a success, and nothing is reported.
 * @example
 * if (error === ALREADY_COMMITTED) return; // a success, not a failure
 */
export const ALREADY_COMMITTED: Error = new Error('workforce-webhooks: this event was already committed');

/** What every attempt's context of one dispatcher shares: one field per context instead of one per member. */
export interface DispatchShared {
  readonly logger: Logger;
  readonly api: ApiClient | undefined;
  readonly begin: DedupeStore['begin'];
  readonly report: (error: unknown, event: WorkforceEvent, ctx: DispatchContext) => void;
}

/**
 * The `ctx` handlers get: a class, not an object literal with getters, as one is made per attempt and prototype
 * getters cost nothing to set up. It is also the attempt's watcher: a cut (time limit, shutdown) asks it which
 * handlers still ran and which succeeded.
 * @example
 * const ctx = new DispatchContext(job.deliveryId, attempt, job.event, shared); await handler(job.event, ctx);
 */
export class DispatchContext implements HandlerContext, AttemptWatcher {
  readonly deliveryId: string | undefined;
  readonly logger: Logger;
  readonly #attempt: AttemptContext;
  readonly #event: WorkforceEvent;
  readonly #shared: DispatchShared;
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
    shared: DispatchShared,
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
