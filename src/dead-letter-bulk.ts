// Replaying or discarding every dead letter that matches a filter, a bounded number at a time, each exactly once.
import { type DeadLetter, type DeadLetterFilter, FILTER_KEYS, unknownKey } from './dead-letters.js';
import { ConfigurationError, WebhookError } from './errors.js';
import { checkReplayPlatform, type EventQueue, type ReplayPlatform } from './queue.js';

/** Where a bulk operation stands, after each dead letter it handled. */
export interface BulkProgress {
  /** Dead letters handled so far. */
  readonly done: number;
  /** Replayed (or discarded) by this call. */
  readonly succeeded: number;
  /** That could not be replayed (the queue refused one); they stay dead letters. */
  readonly failed: number;
  /** Taken meanwhile by another replay or discard (another call, or another instance). */
  readonly skipped: number;
}

/** Options of `replayDeadLetters` and `discardDeadLetters`. */
export interface BulkOptions {
  /**
   * Called after each dead letter. One that throws stops the call, which rejects with its error once the letters under
   * way end.
   */
  readonly onProgress?: (progress: BulkProgress) => void;
  /** Dead letters handled at once: the rate at which replays reach the queue. Default 10. */
  readonly concurrency?: number;
  /**
   * A replay called from a request of a platform that ends its work with its answer (an admin route on Workers: pass
   * `ctx` itself): each replayed event's run is handed to its `waitUntil`, as `EventQueue.replay`'s `platform` is.
   */
  readonly platform?: ReplayPlatform;
}

/** What `replayDeadLetters` did. */
export interface ReplayResult {
  /** Queued again by this call: each runs once. */
  readonly replayed: number;
  /** That failed to enqueue; they stay dead letters, to replay later. */
  readonly failed: number;
}

type Operation = (letter: DeadLetter) => Promise<boolean>;

// The queue itself is gone (unreachable past its deadline, or closed), or the call is wrong (a platform whose waitUntil
// throws): every letter left would fail the same way, each after waiting out its own deadline.
const queueDown = (error: unknown): boolean =>
  error instanceof WebhookError &&
  (error.code === 'queue_unavailable' || error.code === 'shutting_down' || error.code === 'invalid_options');

// Pages through the matches newest first and applies `operate` to each, `concurrency` at a time. The queues'
// cursors neither repeat nor skip a letter as others leave (replayed, discarded) or arrive (a replay failing
// again is newer than the cursor), so each match is handled once by this call; the queue's own `replay` /
// `discard` answers true to one caller only, and both name the failure they listed, so concurrent calls and
// instances never double one, nor touch a letter another call replayed that has failed again meanwhile (a newer
// failure, which this call's filter may leave out).
async function forEachMatch(
  name: 'replayDeadLetters' | 'discardDeadLetters',
  queue: Pick<EventQueue, 'deadLetters'>,
  filter: DeadLetterFilter,
  operate: Operation,
  { onProgress, concurrency = 10, platform }: BulkOptions,
): Promise<BulkProgress> {
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new ConfigurationError('concurrency must be a positive integer');
  checkReplayPlatform(platform);
  // Checked before any letter is touched: one that is not a function (`{ onProgress: verbose && log }` gives false)
  // would throw after the first letters were replayed or discarded, and the call would reject as if none had been.
  if (onProgress !== undefined && typeof onProgress !== 'function')
    throw new ConfigurationError(
      `onProgress must be a function or left out, e.g. ({ done }) => console.log(done), got ${typeof onProgress}`,
    );
  if (typeof filter !== 'object' || filter === null)
    throw new ConfigurationError(
      'the dead-letter filter must be an object or nothing, e.g. { type: "leave.*" }',
    );
  // A key it does not filter by (`{ eventId }`, a read's `{ limit: 10 }`, a misspelt `{ types }`) narrows nothing: the
  // call would act on every dead letter kept.
  const unknown = unknownKey(filter, FILTER_KEYS);
  if (unknown !== undefined)
    throw new ConfigurationError(
      `${name} filters by ${FILTER_KEYS.join(', ')} only, not ${unknown}: it acts on every dead letter that matches. For one letter, call ${name === 'replayDeadLetters' ? "the receiver's replay(eventId)" : 'discard(eventId) on the queue given to createReceiver'}`,
    );
  const { type, since, until } = filter;
  let progress = { done: 0, succeeded: 0, failed: 0, skipped: 0 };
  let cursor: string | undefined;
  // Set when the queue is found gone, or `onProgress` throws: no letter more is started, and the call rejects with it
  // once those under way end (their progress reported), so nothing goes on behind a call that has answered.
  let down: unknown;
  do {
    const page = await queue.deadLetters({ type, since, until, cursor, limit: 1000 });
    const letters = page.items;
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < letters.length && down === undefined) {
        const letter = letters[next++]!;
        let outcome: 'succeeded' | 'skipped' | 'failed';
        try {
          outcome = (await operate(letter)) ? 'succeeded' : 'skipped';
        } catch (error) {
          if (queueDown(error)) down ??= error;
          outcome = 'failed';
        }
        progress = { ...progress, done: progress.done + 1, [outcome]: progress[outcome] + 1 };
        try {
          onProgress?.(progress);
        } catch (error) {
          down ??= error;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, letters.length) }, worker));
    if (down !== undefined) throw down;
    cursor = page.cursor;
  } while (cursor !== undefined);
  return progress;
}

/**
 * Replays every dead letter that matches `filter`, `concurrency` at a time; each runs once even when two calls
 * (or two instances) replay the same letters at the same time. Rejects with the queue's `queue_unavailable` or
 * `shutting_down` once the queue is unreachable or closed, after the replays under way end: the letters not reached
 * stay dead letters (`onProgress` has counted what was done).
 * @example
 * const { replayed, failed } = await replayDeadLetters(queue, { type: 'leave.*' });
 */
export async function replayDeadLetters(
  queue: Pick<EventQueue, 'deadLetters' | 'replay'>,
  filter: DeadLetterFilter = {},
  options: BulkOptions = {},
): Promise<ReplayResult> {
  const { succeeded, failed } = await forEachMatch(
    'replayDeadLetters',
    queue,
    filter,
    (letter) => queue.replay(letter.event.id, { failedAt: letter.failedAt, platform: options.platform }),
    options,
  );
  return { replayed: succeeded, failed };
}

/**
 * Drops every dead letter that matches `filter` for good and answers how many this call dropped; rejects as
 * `replayDeadLetters` does once the queue is unreachable or closed.
 * @example
 * const dropped = await discardDeadLetters(queue, { type: 'leave.cancelled', until: '2026-11-01' });
 */
export async function discardDeadLetters(
  queue: Pick<EventQueue, 'deadLetters' | 'discard'>,
  filter: DeadLetterFilter = {},
  options: BulkOptions = {},
): Promise<number> {
  const { succeeded } = await forEachMatch(
    'discardDeadLetters',
    queue,
    filter,
    (letter) => queue.discard(letter.event.id, { failedAt: letter.failedAt }),
    options,
  );
  return succeeded;
}
