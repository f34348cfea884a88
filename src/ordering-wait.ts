// The signal a queue gets when an event's ordering key is held by another event: run it later, as the same attempt.

/**
 * Thrown by the processor instead of running an event whose key another event holds. The queue does not count it
 * as an attempt: it runs the job again once `ready` settles (in-process) or after `retryInMs` (a durable queue).
 * @example
 * if (error instanceof OrderingWait) await job.moveToDelayed(Date.now() + error.retryInMs, token);
 */
export class OrderingWait extends Error {
  readonly retryInMs: number;
  readonly #whenReady: () => Promise<void>;
  #ready: Promise<void> | undefined;

  constructor(retryInMs: number, whenReady: () => Promise<void>) {
    super('workforce-webhooks: the event waits for its ordering key');
    this.name = 'OrderingWait';
    this.retryInMs = retryInMs;
    this.#whenReady = whenReady;
  }

  /**
   * Settles when the key may be free. Its timer is made on first read: a durable queue polls every few hundred
   * milliseconds and reads only `retryInMs`, and a timer per poll would pile up for the whole wait.
   */
  get ready(): Promise<void> {
    this.#ready ??= this.#whenReady();
    return this.#ready;
  }
}
