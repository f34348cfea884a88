// The attempt of an ordered event as its handlers see it, which the key's lease renewals also keep track of.
import type { WebhookError } from './errors.js';
import type { AttemptContext, AttemptWatcher } from './queue.js';

/**
 * The attempt as handlers see it: its number and signal, with the key and whether the event is stale. It is also
 * the run's entry among the keys held in this process: its event, its run (the lease's identity in the store), how
 * many renewals it had, its handlers' promise once they have one, and whether it is leaving the key.
 * @example
 * const ordered = new OrderedAttempt(attempt, event.id, orderingKey, isStale, run);
 */
export class OrderedAttempt implements AttemptContext {
  readonly #attempt: AttemptContext;
  readonly eventId: string;
  readonly orderingKey: string;
  readonly stale: boolean;
  readonly run: string;
  renewals = 0;
  ran: Promise<void> | undefined;
  /** The event became a dead letter while these handlers still ran: when they settle, the key is given up. */
  deadLettered = false;
  /** The handlers succeeded and the watermark is being written (tried again while the store refuses it). */
  leaving = false;
  // Made only when the handlers read `signal` or the key's lease is lost: most attempts never need either.
  #lost: AbortController | undefined;
  #signal: AbortSignal | undefined;

  constructor(attempt: AttemptContext, eventId: string, orderingKey: string, stale: boolean, run: string) {
    this.#attempt = attempt;
    this.eventId = eventId;
    this.orderingKey = orderingKey;
    this.stale = stale;
    this.run = run;
  }

  get attempt(): number {
    return this.#attempt.attempt;
  }

  /** The attempt's signal, also aborted (`lease_lost`) when another event of the key took the key's lease. */
  get signal(): AbortSignal {
    this.#lost ??= new AbortController();
    this.#signal ??= AbortSignal.any([this.#attempt.signal, this.#lost.signal]);
    return this.#signal;
  }

  /** The attempt ended by its abort (a time limit, a shutdown): read rarely, it makes the attempt's signal. */
  get aborted(): boolean {
    return this.#attempt.signal.aborted;
  }

  lose(reason: WebhookError): void {
    this.#lost ??= new AbortController();
    this.#lost.abort(reason);
  }

  // The attempt cut short asks the handlers' dispatcher, not this wrapper, which of them succeeded.
  watch(watcher: AttemptWatcher): void {
    this.#attempt.watch?.(watcher);
  }
}
