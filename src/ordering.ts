// Spec rule 4 done by the receiver: one event per record key at a time, and never an older event over a newer one.
import { eventLogFields } from './envelope.js';
import { ConfigurationError } from './errors.js';
import { createWarnOnce, type Logger } from './logger.js';
import { OrderedAttempt } from './ordered-attempt.js';
import { withOrderingDeadline } from './ordering-deadline.js';
import { freed, KeyGates } from './ordering-gates.js';
import { asKey, byDefaultKeys, type OrderingKey } from './ordering-keys.js';
import { keyLeases } from './ordering-leases.js';
import { leaveRetries } from './ordering-leave-retries.js';
import { markedEvent, markOf, type OrderingMark } from './ordering-mark.js';
import type { KeyEntry, OrderingStore } from './ordering-store.js';
import { OrderingWait } from './ordering-wait.js';
import type { AttemptContext, DeadLetter, JobProcessor, QueuedEvent } from './queue.js';
import type { WorkforceEvent } from './types.js';

/** `createReceiver({ ordering })`: one event per key at a time, and never an older one over a newer one. */
export interface OrderingOptions {
  /** The record key of an event. Default `byDefaultKeys()`: `leave.*` by `data.leaveRequestId`. */
  readonly key?: OrderingKey;
  /** An event older than its key's newest handled one: `skip` it (default) or `run` it with `ctx.stale`. */
  readonly stale?: 'skip' | 'run';
  /** How long a failing event holds newer events of its key before they go ahead. Default 5 minutes. */
  readonly maxWaitMs?: number;
}

// An answer of a store that may answer at once (in process) or with a promise.
const isPromise = <T>(value: T | Promise<T>): value is Promise<T> =>
  typeof (value as Promise<T> | undefined)?.then === 'function';

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
  /** Resolves once no refused watermark write is tried again, or after `timeoutMs` (logged: on close). */
  settled(timeoutMs: number): Promise<void>;
}

/** What `createOrdering` needs beside the user's options. */
export interface OrderingSetup extends OrderingOptions {
  readonly store: OrderingStore | undefined;
  /** The store is shared by other instances (not in-process): a key may be given up where no wake-up reaches. */
  readonly shared: boolean;
  readonly leaseMs: number;
  readonly doneTtlMs: number;
  /** Each call to a shared store is given up after it (the receiver's `storeTimeoutMs`). Default 2000. */
  readonly timeoutMs?: number;
  readonly logger: Logger;
  readonly onStale: ((event: WorkforceEvent, newer: OrderingMark) => unknown) | undefined;
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
  if (given === undefined)
    throw new ConfigurationError(
      'ordering needs a store that keeps watermarks (every store of this package does)',
    );
  // A store written before `renew` was required: renewing with `enter` could take back a key its run gave up.
  if (typeof given.renew !== 'function')
    throw new ConfigurationError(
      "the store's ordering has no renew(key, owner, run, leaseMs): add it (extend the run's own lease only while that run still has it; see OrderingStore)",
    );
  if (typeof key !== 'function') throw new ConfigurationError('ordering.key must be a function');
  if (stale !== 'skip' && stale !== 'run')
    throw new ConfigurationError(`ordering.stale must be 'skip' or 'run'`);
  if (!Number.isFinite(maxWaitMs) || maxWaitMs <= 0)
    throw new ConfigurationError('ordering.maxWaitMs must be a positive number');
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0)
    throw new ConfigurationError('the ordering store deadline (storeTimeoutMs) must be a positive number');
  // A store that can stall (Redis or Postgres silent) gets the receiver's deadline on every step, as claims do: a
  // watermark write that hangs would otherwise hold its key and turn an attempt whose handlers succeeded into one cut
  // by its time limit (retried, or dead-lettered). An in-process store answers at once and costs no timer.
  const store = shared ? withOrderingDeadline(given, timeoutMs) : given;

  // Each run of an event (an attempt on this instance, with its waits) holds the key as its own: the event's retry on
  // another instance waits for handlers of an earlier run still running here, and a run that settles late never
  // gives up or holds a later run's lease. A counter after one random prefix (unique across instances) costs a
  // string per run, and no promise.
  const instance = `${crypto.randomUUID()}:`;
  let runs = 0;

  // In-process wake-ups: events waiting for a key this process gives up go at once, not at their next look.
  const gates = new KeyGates();
  const wake = (orderingKey: string): void => gates.wake(orderingKey);

  // Never awaited: a skip is answered (or its attempt ends) whatever `onStale` takes, so a slow one cannot turn a
  // skipped event into a timed-out attempt, retried and dead-lettered.
  const reportStale = (event: WorkforceEvent, watermark: string): void => {
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

  // A watermark the store refused is written again, the key kept meanwhile (made once; its timers only on a failure).
  const retryLeave = leaveRetries({ store, leaseMs, maxWaitMs, ttlMs: doneTtlMs, logger });

  // The events whose keys are held in this process, by key: their leases renewed, a retry of one of them waits until
  // its handlers settle, and no other event of the key starts here meanwhile.
  const held = keyLeases({ store, leaseMs, maxWaitMs, logger });

  // What `enter` would say of a key a run of this process holds, whatever its lease in the store: a store that
  // refuses renewals (out of memory, away) lets the lease lapse while the run's handlers or its watermark write go
  // on. The wait ends with the run's wake-up, or looks again after a lease.
  const heldHere: KeyEntry = { status: 'busy', retryInMs: leaseMs };
  // The key given up here: by `leaving`, the run that wrote its mark, if any; waiters of this process look again.
  const release = (orderingKey: string, leaving: OrderedAttempt | undefined): void => {
    if (leaving !== undefined) held.done(leaving);
    wake(orderingKey);
  };

  // Moves the key's watermark and gives the key up (the run's; any run of the event when none is named: a dead
  // letter); never rejects. `leaving`, the run that wrote the mark, holds the key here until the mark lands (tried
  // again while the store refuses it) or is given up. No promise when the store answers at once.
  const leave = (
    orderingKey: string,
    eventId: string,
    mark: string | undefined,
    runId?: string,
    leaving?: OrderedAttempt,
  ): Promise<void> | undefined => {
    const failed = (error: unknown): void => {
      logger.error({ eventId, err: error }, 'workforce-webhooks: could not give up an ordering key');
      // Spec rule 4: a watermark not moved lets an older event of the record run over this one, so it is written
      // again, the key kept until then. Without a mark the key's lease just lapses by itself.
      if (mark !== undefined)
        retryLeave(orderingKey, eventId, mark, runId, () => release(orderingKey, leaving));
      else release(orderingKey, leaving);
    };
    let landed: boolean | Promise<boolean>;
    try {
      landed = store.leave(orderingKey, eventId, mark, doneTtlMs, runId);
    } catch (error) {
      failed(error);
      return undefined;
    }
    if (!isPromise(landed)) {
      release(orderingKey, leaving);
      return undefined;
    }
    return landed.then(() => release(orderingKey, leaving), failed);
  };

  const hold = async (orderingKey: string, eventId: string, runId: string): Promise<void> => {
    try {
      await store.hold(orderingKey, eventId, maxWaitMs, runId);
    } catch (error) {
      logger.error({ eventId, err: error }, 'workforce-webhooks: could not hold an ordering key');
    } finally {
      // Waiters look again: the hold may already have passed its bound.
      wake(orderingKey);
    }
  };

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
    try {
      return asKey(key(event));
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
    settled: retryLeave.settled,
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
