// A claimed event handed to the queue: the queue's deadline, its answer (202, full, unavailable) and the claim's fate.
import type { Claims } from './claims.js';
import { withDeadline } from './deadline.js';
import { WebhookError } from './errors.js';
import type { Logger } from './logger.js';
import type { EnqueueResult, EventQueue, QueuedEvent } from './queue.js';
import { type Answer, acceptedWithWork, answers, type WebhookResponse, withBackground } from './responses.js';

/**
 * Puts a claimed event on the queue and answers the delivery: 202 once the queue holds it (the id then marked done
 * in the background), 503 when the queue is full, refuses it or does not answer in `queueTimeoutMs`. `failure`: an
 * inline run's hand-over, the failure of its last attempt (see `EventQueue.enqueue`).
 * @example
 * const enqueue = createEnqueue({ queue, claims, queueTimeoutMs: 2000, logger, warnOnce, closing: () => false });
 * return enqueue({ event, deliveryId }, claim.token);
 */
export function createEnqueue({
  queue,
  claims,
  queueTimeoutMs,
  logger,
  warnOnce,
  closing,
}: {
  readonly queue: EventQueue;
  readonly claims: Claims;
  readonly queueTimeoutMs: number;
  readonly logger: Logger;
  readonly warnOnce: (kind: string, obj: object, msg: string) => void;
  /** Whether the receiver is closing: a refusal is then `shutting_down`. */
  readonly closing: () => boolean;
}): (job: QueuedEvent, token: string, failure?: unknown) => Answer {
  // An enqueue past its deadline may still land (a silent Redis that wakes up runs the commands it holds). The
  // claim is kept until it is known: a job that landed owns the event, so the id is marked done and the sender's
  // retry is a duplicate; one that failed gives the claim up for the retry. Either way the event runs once.
  const settleLate = (job: QueuedEvent, token: string, pending: Promise<EnqueueResult>): void => {
    const id = job.event.id;
    void pending.then(
      (held) => (held.status === 'queued' ? claims.complete(id, token) : claims.release(id, token)),
      () => claims.release(id, token),
    );
  };

  // A refused event's claim goes, so the sender's retry can take it; but not an inline run's hand-over (attempts
  // made, already answered 2xx): the inline runner still owns that claim, asks again, and gives it up itself.
  const giveUpClaim = (job: QueuedEvent, token: string): Promise<void> | undefined =>
    job.attemptsMade !== undefined && job.attemptsMade > 0 ? undefined : claims.release(job.event.id, token);

  // The claim is released in the background: a store that stopped answering too must not hold the 503.
  const refused = (job: QueuedEvent, token: string, error: unknown, release: boolean): WebhookResponse => {
    const released = release ? giveUpClaim(job, token) : undefined;
    const shuttingDown = closing();
    // A queue close() has closed refuses what it is handed next: part of every shutdown (the sender retries the
    // 503), not an error of the queue.
    if (shuttingDown && error instanceof WebhookError && error.code === 'shutting_down')
      logger.debug(
        { eventId: job.event.id },
        'workforce-webhooks: delivery answered shutting_down, the queue closed',
      );
    else
      logger.error({ eventId: job.event.id, err: error }, 'workforce-webhooks: the queue refused the event');
    return withBackground(
      shuttingDown ? answers.unavailable.shutting_down : answers.unavailable.queue_unavailable,
      released,
    );
  };

  const queued = (job: QueuedEvent, token: string, result: EnqueueResult): Answer => {
    if (result.status === 'full') {
      warnOnce(
        'queue_full',
        {},
        'workforce-webhooks: the queue is full; deliveries are answered 503 until it drains',
      );
      const released = giveUpClaim(job, token);
      return released === undefined
        ? answers.unavailable.queue_full
        : released.then(() => answers.unavailable.queue_full);
    }
    // The queue owns the event now. Marking the id done is not awaited (a failure there is only logged): one
    // store round trip before the 202 instead of two; the mark is part of the background work.
    return acceptedWithWork(claims.complete(job.event.id, token), result);
  };

  return (job, token, failure) => {
    let result: Promise<EnqueueResult>;
    let late = false;
    try {
      // An in-process queue cannot stall: no deadline, and none of its timer and promises.
      result = queue.inProcess
        ? queue.enqueue(job, failure)
        : withDeadline(
            () => queue.enqueue(job, failure),
            queueTimeoutMs,
            'queue_unavailable',
            (pending) => {
              late = true;
              settleLate(job, token, pending);
            },
          );
    } catch (error) {
      return refused(job, token, error, true);
    }
    return result.then(
      (held) => queued(job, token, held),
      (error: unknown) => refused(job, token, error, !late),
    );
  };
}
