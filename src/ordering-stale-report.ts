// A stale event skipped (spec rule 4): logged at info, and reported to `onStale`, never awaited.
import { eventLogFields } from './envelope.js';
import { isPromise } from './is-promise.js';
import type { Logger } from './logger.js';
import { markedEvent, type OrderingMark } from './ordering-mark.js';
import type { WorkforceEvent } from './types.js';

/**
 * Makes the report of a stale event skipped, given the watermark of its key (the newer event). Never awaited: a skip
 * is answered (or its attempt ends) whatever `onStale` takes, so a slow one cannot turn a skipped event into a
 * timed-out attempt, retried and dead-lettered; one that throws or rejects is logged.
 * @example
 * const reportStale = staleReporter({ logger, onStale }); reportStale(event, watermark);
 */
export function staleReporter({
  logger,
  onStale,
}: {
  readonly logger: Logger;
  readonly onStale: ((event: WorkforceEvent, newer: OrderingMark) => unknown) | undefined;
}): (event: WorkforceEvent, watermark: string) => void {
  return (event, watermark) => {
    const newer = markedEvent(watermark);
    // The type only in the spec's shape: any other text of it is the body's.
    logger.info(
      { ...eventLogFields(event), newerEventId: newer.id },
      'workforce-webhooks: stale event skipped (a newer one of its record was handled)',
    );
    if (onStale === undefined) return;
    const threw = (error: unknown): void => {
      logger.error({ eventId: event.id, err: error }, 'workforce-webhooks: onStale threw');
    };
    try {
      const reported = onStale(event, newer);
      if (isPromise(reported)) reported.then(undefined, threw);
    } catch (error) {
      threw(error);
    }
  };
}
