// In-process wake-ups of ordering waits: an event waiting for a key this process gives up goes at once.
import { MAX_TIMER_MS } from './timer-limit.js';

/**
 * One gate per key some event of this process waits on, opened by the key's next wake-up. A gate is made when the
 * key is found busy, so a wake before anyone waits is not lost, and goes only with a wake.
 * @example
 * const gates = new KeyGates(); await freed(gates.gateOf(key), retryInMs); // elsewhere: gates.wake(key)
 */
export class KeyGates {
  readonly #gates = new Map<string, { readonly opened: Promise<void>; readonly open: () => void }>();

  /** Keys some event waits on. */
  get size(): number {
    return this.#gates.size;
  }

  /** Opens the key's gate, if any: its waiters look again. */
  wake(orderingKey: string): void {
    const gate = this.#gates.get(orderingKey);
    this.#gates.delete(orderingKey);
    gate?.open();
  }

  /** The key's gate, made when there is none. */
  gateOf(orderingKey: string): Promise<void> {
    let gate = this.#gates.get(orderingKey);
    if (gate === undefined) {
      let open!: () => void;
      const opened = new Promise<void>((resolve) => {
        open = resolve;
      });
      gate = { opened, open };
      this.#gates.set(orderingKey, gate);
    }
    return gate.opened;
  }

  /** The key's gate when another wait made one; none is made. */
  existing(orderingKey: string): Promise<void> | undefined {
    return this.#gates.get(orderingKey)?.opened;
  }
}

/**
 * Resolves when `opened` settles (when given), after `ms` at the most, or sooner when `signal` aborts.
 * @example
 * await freed(gates.gateOf(key), entry.retryInMs, attempt.signal);
 */
export function freed(opened: Promise<unknown> | undefined, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    // A key held past the longest delay a timer keeps (an `ordering.maxWaitMs` of weeks) is looked at again after
    // it: a longer one fires at once, and the event would go round its busy key every millisecond for the whole wait.
    const timer = setTimeout(done, Math.min(ms, MAX_TIMER_MS));
    void opened?.then(done, done);
    signal?.addEventListener('abort', done, { once: true });
  });
}
