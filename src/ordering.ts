// Spec rule 4 done by the receiver: one event per record key at a time, and never an older event over a newer one.
import { eventLogFields } from './envelope.js';
import { isPromise } from './is-promise.js';
import { createWarnOnce } from './logger.js';
import { OrderedAttempt } from './ordered-attempt.js';
import { withOrderingDeadline } from './ordering-deadline.js';
import { freed, KeyGates } from './ordering-gates.js';
import { asKey, byDefaultKeys } from './ordering-keys.js';
import { keyLeases } from './ordering-leases.js';
import { keyRelease } from './ordering-leave.js';
import { leaveRetries } from './ordering-leave-retries.js';
import { markOf } from './ordering-mark.js';
import { checkOrderingSetup, type OrderingSetup } from './ordering-options.js';
import { staleReporter } from './ordering-stale-report.js';
import type { KeyEntry } from './ordering-store.js';
import { OrderingWait } from './ordering-wait.js';
import type { AttemptContext, DeadLetter, JobProcessor, QueuedEvent } from './queue.js';
import type { WorkforceEvent } from './types.js';

export type { OrderingOptions, OrderingSetup } from './ordering-options.js';

/** What the receiver does with ordering on. */
export interface Ordering {
  /** The event's key and mark, or undefined when it is not ordered. */
  keyOf(event: WorkforceEvent): string | undefined;
  /** True when the event is to be answered stale at once (`skip`, older than `watermark`); reports it. */
  staleOnArrival(event: WorkforceEvent, watermark: string | undefined): boolean;
  /**
   * The processor with the key taken around each attempt. A busy key: `inline` waits for it in place; `local` (a
   * queue in this process) and `durable` hand the event back to the queue with an `OrderingWait`.
   */
  wrap(process: JobProcessor, waits: 'inline' | 'local' | 'durable'): JobProcessor;
  /** Keys some event of this process waits on, for a wake-up when this process gives them up. */
  readonly waitedKeys: number;
  /** Gives a dead-lettered event's key up, so newer events go ahead. */
  deadLettered(letter: DeadLetter): Promise<void>;
  /**
   * Resolves once no refused watermark write is tried again, or after `timeoutMs` (logged: on close). Then the
   * receiver is closed: handlers that outlive it renew no lease and retry no write (the app may close the store's
   * client), and give their keys up as they end, a failure not logged; a key not given up lapses with its lease.
   */
  settled(timeoutMs: number): Promise<void>;
}

// How soon a durable queue looks again at a key held on another instance (plus up to as much jitter).
const POLL_MS = 100;

/**
 * Builds the receiver's ordering from its options.
 * @example
 * const ordering = createOrdering({ ...options.ordering, store: store.ordering, leaseMs, doneTtlMs, logger, onStale });
 */
export function createOrdering({
  key = byDefaultKeys(),
  stale = 'skip',
  maxWaitMs = 5 * 60_000,
  store: given,
  shared,
  leaseMs,
  doneTtlMs,
  timeoutMs = 2000,
  logger,
  onStale,
}: OrderingSetup): Ordering {
  const checked = checkOrderingSetup({ key, stale, maxWaitMs, timeoutMs, store: given });
  // A store that can stall (Redis or Postgres silent) gets the receiver's deadline on every step, as claims do: a
  // watermark write that hangs would otherwise hold its key and turn an attempt whose handlers succeeded into one cut
  // by its time limit (retried, or dead-lettered). An in-process store answers at once and costs no timer.
  const store = shared ? withOrderingDeadline(checked, timeoutMs) : checked;

  // Each run of an event (an attempt on this instance, with its waits) holds the key as its own: the event's retry on
  // another instance waits for handlers of an earlier run still running here, and a run that settles late never
  // gives up or holds a later run's lease. A counter after one random prefix (unique across instances) costs a
  // string per run, and no promise.
  // Drawn on the first ordered run, not as the receiver is made: Workers refuse random values in a module's global
  // scope, where the README's Worker makes its receiver.
  let instance: string | undefined;
  let runs = 0;

  // In-process wake-ups: events waiting for a key this process gives up go at once, not at their next look.
  const gates = new KeyGates();
  const wake = (orderingKey: string): void => gates.wake(orderingKey);

  // Never awaited: a slow `onStale` cannot turn a skipped event into a timed-out attempt.
  const reportStale = staleReporter({ logger, onStale });

  // A watermark the store refused is written again, the key kept meanwhile (made once; its timers only on a failure).
  const retryLeave = leaveRetries({ store, leaseMs, maxWaitMs, ttlMs: doneTtlMs, logger });

  // The events whose keys are held in this process, by key: their leases renewed, a retry of one of them waits until
  // its handlers settle, and no other event of the key starts here meanwhile.
  const held = keyLeases({ store, leaseMs, maxWaitMs, logger });

  // What `enter` would say of a key a run of this process holds, whatever its lease in the store: a store that
  // refuses renewals (out of memory, away) lets the lease lapse while the run's handlers or its watermark write go
  // on. The wait ends with the run's wake-up, or looks again after a lease.
  const heldHere: KeyEntry = { status: 'busy', retryInMs: leaseMs };

  // How a run gives its key up: its watermark written (again while the store refuses it), or the key held.
  const { leave, hold } = keyRelease({ store, held, retryLeave, wake, doneTtlMs, maxWaitMs, logger });

  const skip = async (
    orderingKey: string,
    event: WorkforceEvent,
    watermark: string,
    runId: string,
  ): Promise<void> => {
    await leave(orderingKey, event.id, undefined, runId);
    reportStale(event, watermark);
  };

  // Once per event type (in the spec's shape, else one kind): every delivery of the type would say the same.
  const warnOnce = createWarnOnce(logger);
  // At accept time a key function that throws must not answer every delivery of the type 500 for ever: the event
  // is claimed without its key, and its attempts (which read the key again) fail, are retried and dead-lettered.
  const keyOf = (event: WorkforceEvent): string | undefined => {
    let value: unknown;
    try {
      value = key(event);
    } catch (error) {
      const { type } = eventLogFields(event);
      warnOnce(
        `ordering_key_threw:${type ?? 'other'}`,
        { type, errorName: error instanceof Error ? error.name : typeof error },
        'workforce-webhooks: ordering.key threw for an event of this type: its attempts fail until it is fixed (return a string key, or undefined for an event that is not ordered; never throw)',
        'error',
      );
      return undefined;
    }
    const found = asKey(value);
    // A number, an object or `true` orders nothing, as undefined does: said once per type, since a JS key function
    // returning a record's numeric id would otherwise leave the record unordered without a word. Not the value: it
    // may be text of the body.
    if (found === undefined && typeof value !== 'string' && value !== undefined && value !== null) {
      const { type } = eventLogFields(event);
      const returned = Array.isArray(value) ? 'array' : typeof value;
      warnOnce(
        `ordering_key_not_string:${type ?? 'other'}`,
        { type, returned },
        `workforce-webhooks: ordering.key returned a value of type ${returned} for an event of this type, not a string: its events are not ordered. Return the record's key as a string (a numeric id written as text), or undefined for an event that is not ordered`,
      );
    }
    return found;
  };

  return {
    keyOf,
    staleOnArrival(event, watermark) {
      if (stale !== 'skip' || watermark === undefined) return false;
      const mark = markOf(event);
      // Its own mark (the record's newest handled event, delivered again once its done id was forgotten) is no older
      // than itself: it goes on, and its run finds it done without running it.
      if (mark === undefined || mark >= watermark) return false;
      reportStale(event, watermark);
      return true;
    },
    // The last step of close(): after it the app may close the store's client.
    async settled(timeoutMs) {
      try {
        await retryLeave.settled(timeoutMs);
      } finally {
        held.close();
        retryLeave.close();
      }
    },
    get waitedKeys() {
      return gates.size;
    },
    wrap(process, waits) {
      // The key is the event's: run the attempt, or skip it when it is stale. Nothing here awaits a store that
      // answers at once (in process), so ordering adds no promise of its own to an event whose key is free.
      const run = (
        job: QueuedEvent,
        attempt: AttemptContext,
        orderingKey: string,
        mark: string,
        entry: KeyEntry,
        runId: string,
      ): Promise<void> => {
        if (entry.status === 'busy') return waitForKey(job, attempt, orderingKey, mark, entry, runId);
        const { event } = job;
        const { watermark } = entry;
        // Its own mark: an earlier attempt's handlers, past its time limit, all succeeded after all. Done.
        if (mark === watermark) return leave(orderingKey, event.id, undefined, runId) ?? Promise.resolve();
        const isStale = watermark !== undefined && mark < watermark;
        // Not run, not retried, not dead-lettered: the newer event's handlers already brought the record on.
        if (isStale && stale === 'skip') return skip(orderingKey, event, watermark, runId);
        const ordered = new OrderedAttempt(attempt, event.id, orderingKey, isStale, runId);
        held.keep(ordered);
        let ran: Promise<void>;
        try {
          ran = process(job, ordered);
        } catch (error) {
          ran = Promise.reject(error);
        }
        ordered.ran = ran;
        return ran.then(
          () => {
            // The key stays this run's here until its watermark is written, then goes to the next event.
            ordered.leaving = true;
            return leave(orderingKey, event.id, mark, runId, ordered);
          },
          async (error: unknown) => {
            held.done(ordered);
            // Dead-lettered while these handlers ran on: no attempt follows, so the key goes now.
            if (ordered.deadLettered) await leave(orderingKey, event.id, undefined, runId);
            else await hold(orderingKey, event.id, runId);
            throw error;
          },
        );
      };
      // Another event holds the key: wait for it here (inline runs), or hand the event back to its queue.
      const waitForKey = async (
        job: QueuedEvent,
        attempt: AttemptContext,
        orderingKey: string,
        mark: string,
        busy: KeyEntry,
        runId: string,
      ): Promise<void> => {
        let entry = busy;
        while (entry.status === 'busy') {
          const { retryInMs } = entry;
          // With a durable queue the event may run next on another instance, and with a shared store the key be
          // given up on another one: a gate made here would wait for a wake that never comes, and stay. Such a
          // wait looks again soon, with a gate another event of this process made, or the delay alone.
          const polled = waits === 'durable' || shared;
          const delay = polled ? Math.min(retryInMs, POLL_MS + Math.random() * POLL_MS) : retryInMs;
          const opened = polled ? gates.existing(orderingKey) : gates.gateOf(orderingKey);
          if (waits !== 'inline') throw new OrderingWait(Math.round(delay), () => freed(opened, delay));
          entry = await enterAfter(
            job.event.id,
            attempt,
            orderingKey,
            freed(opened, delay, attempt.signal),
            runId,
          );
        }
        return run(job, attempt, orderingKey, mark, entry, runId);
      };
      // An inline run waits in place, as long as its attempt lasts: once that ends (its time limit, a shutdown),
      // the event is the queue's, and this wait gives up.
      const enterAfter = async (
        eventId: string,
        attempt: AttemptContext,
        orderingKey: string,
        wait: Promise<void>,
        runId: string,
      ): Promise<KeyEntry> => {
        await wait;
        const { signal } = attempt;
        if (signal.aborted) throw signal.reason;
        if (held.get(orderingKey) !== undefined) return heldHere;
        const entry = await store.enter(orderingKey, eventId, leaseMs, runId);
        if (!signal.aborted) return entry;
        if (entry.status === 'entered') await leave(orderingKey, eventId, undefined, runId);
        throw signal.reason;
      };
      // An earlier attempt of the event still runs here (its handlers outlived its time limit): the event waits
      // for them as for a key held by another event, and at most a lease at a time.
      const afterEarlier = (
        job: QueuedEvent,
        attempt: AttemptContext,
        earlier: OrderedAttempt,
      ): Promise<void> => {
        if (waits !== 'inline') {
          const delay = waits === 'durable' ? POLL_MS + Math.random() * POLL_MS : leaseMs;
          throw new OrderingWait(Math.round(delay), () => freed(earlier.ran, delay));
        }
        return freed(earlier.ran, leaseMs, attempt.signal).then(() => {
          const { signal } = attempt;
          if (signal.aborted) throw signal.reason;
          return ordered(job, attempt);
        });
      };
      const ordered: JobProcessor = (job, attempt) => {
        const { event } = job;
        let orderingKey: string | undefined;
        // A key function that throws fails the attempt like a handler would: retried, then dead-lettered.
        try {
          orderingKey = asKey(key(event));
        } catch (error) {
          return Promise.reject(error);
        }
        const mark = orderingKey === undefined ? undefined : markOf(event);
        // An event whose occurredAt is not a date (the envelope check lets few through) is not ordered.
        if (orderingKey === undefined || mark === undefined) return process(job, attempt);
        runs += 1;
        instance ??= `${crypto.randomUUID()}:`;
        const runId = instance + runs;
        const earlier = held.get(orderingKey);
        // Another event's run holds the key here, or this event's own run writes its watermark: wait for its wake-up.
        if (earlier !== undefined)
          return earlier.eventId === event.id && !earlier.leaving
            ? afterEarlier(job, attempt, earlier)
            : waitForKey(job, attempt, orderingKey, mark, heldHere, runId);
        let entry: KeyEntry | Promise<KeyEntry>;
        try {
          entry = store.enter(orderingKey, event.id, leaseMs, runId);
        } catch (error) {
          return Promise.reject(error);
        }
        return isPromise(entry)
          ? entry.then((found) => run(job, attempt, orderingKey, mark, found, runId))
          : run(job, attempt, orderingKey, mark, entry, runId);
      };
      return ordered;
    },
    async deadLettered(letter) {
      const orderingKey = keyOf(letter.event);
      if (orderingKey === undefined || markOf(letter.event) === undefined) return;
      // Its last attempt ended on its time limit while its handlers run on here (they ignore their signal): the
      // key stays theirs, and goes when they settle, so no newer event of the record runs beside them.
      const late = held.get(orderingKey);
      if (late !== undefined && late.eventId === letter.event.id) {
        late.deadLettered = true;
        return;
      }
      // No run: a dead letter gives the event's key up whatever run of it held it last.
      await leave(orderingKey, letter.event.id, undefined);
    },
  };
}
