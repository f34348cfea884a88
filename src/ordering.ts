// Spec rule 4 done by the receiver: one event per record key at a time, and never an older event over a newer one.
import { ConfigurationError, WebhookError } from './errors.js';
import type { Logger } from './logger.js';
import type { KeyEntry, OrderingStore } from './ordering-store.js';
import { OrderingWait } from './ordering-wait.js';
import type { AttemptContext, DeadLetter, JobProcessor, QueuedEvent } from './queue.js';
import type {
  EventDataMap,
  EventOf,
  EventPattern,
  TypesOf,
  UnknownEventType,
  WorkforceEvent,
} from './types.js';

/** Which record an event is about; undefined: the event is not ordered. */
export type OrderingKey = (event: WorkforceEvent) => string | undefined;

/** Per event type (or `prefix.*`) of the map, how to read the record key from a typed event. */
export type OrderingKeyRules<M = EventDataMap> = {
  readonly [P in Exclude<EventPattern<M>, UnknownEventType>]?: (
    event: EventOf<M, TypesOf<M, P>>,
  ) => string | undefined;
};

/** The event that made another stale: the newest one of its key whose handlers all succeeded. */
export interface OrderingMark {
  readonly id: string;
  readonly occurredAt: string;
}

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

const asKey = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value : undefined;

/**
 * The record keys of the event types whose payload the spec documents (`leave.*` by `data.leaveRequestId`),
 * extended or overridden by `rules`; an exact type wins over a `prefix.*`, a longer prefix over a shorter.
 * @example
 * createReceiver({ secret, ordering: { key: byDefaultKeys({ 'employee.*': (e) => String(e.data.employeeId) }) } });
 */
export function byDefaultKeys<M = EventDataMap>(rules: OrderingKeyRules<M> = {}): OrderingKey {
  const all: Record<string, ((event: never) => unknown) | undefined> = {
    'leave.*': (event: WorkforceEvent) => event.data.leaveRequestId,
    ...(rules as Record<string, (event: never) => unknown>),
  };
  // The rule of each type seen, found once.
  const found = new Map<string, ((event: WorkforceEvent) => unknown) | undefined>();
  const ruleOf = (type: string): ((event: WorkforceEvent) => unknown) | undefined => {
    if (Object.hasOwn(all, type)) return all[type] as (event: WorkforceEvent) => unknown;
    for (let end = type.lastIndexOf('.'); end > 0; end = type.lastIndexOf('.', end - 1)) {
      const pattern = `${type.slice(0, end)}.*`;
      if (Object.hasOwn(all, pattern)) return all[pattern] as (event: WorkforceEvent) => unknown;
    }
    return undefined;
  };
  return (event) => {
    let rule = found.get(event.type);
    if (rule === undefined && !found.has(event.type)) {
      rule = ruleOf(event.type);
      found.set(event.type, rule);
    }
    return rule === undefined ? undefined : asKey(rule(event));
  };
}

const FRACTION = /\.(\d+)/;

/**
 * The event's place in its key's order, as a string that compares like the events do: `occurredAt` as an instant
 * (to the nanosecond, whatever its offset), then the event id; undefined when `occurredAt` is not a date from 1970 on
 * (an envelope's four-digit years always fit).
 * @example
 * markOf(older) < markOf(newer); // true
 */
export function markOf(event: Pick<WorkforceEvent, 'id' | 'occurredAt'>): string | undefined {
  const ms = Date.parse(event.occurredAt);
  if (!(ms >= 0 && ms < 1e15)) return undefined; // not a date, before 1970, or past 15 digits (year 33658)
  const below = (FRACTION.exec(event.occurredAt)?.[1] ?? '').slice(3, 9).padEnd(6, '0');
  // Joined, not a template: a template makes a chain of string pieces, and the watermark table keeps each mark for
  // the dedupe window (measured: more GC per ordered event). The 15 digits are those of 1e15 + ms past its leading
  // 1: a third of padStart's cost.
  return [String(ms + 1e15).slice(1), below, ' ', event.id, ' ', event.occurredAt].join('');
}

/** The event a mark was made of. */
export function markedEvent(mark: string): OrderingMark {
  const [, id = '', occurredAt = ''] = mark.split(' ');
  return { id, occurredAt };
}

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
}

/** What `createOrdering` needs beside the user's options. */
export interface OrderingSetup extends OrderingOptions {
  readonly store: OrderingStore | undefined;
  readonly leaseMs: number;
  readonly doneTtlMs: number;
  readonly logger: Logger;
  readonly onStale: ((event: WorkforceEvent, newer: OrderingMark) => unknown) | undefined;
}

// How soon a durable queue looks again at a key held on another instance (plus up to as much jitter).
const POLL_MS = 100;

// The attempt as handlers see it: its number and signal, with the key and whether the event is stale.
class OrderedAttempt implements AttemptContext {
  readonly #attempt: AttemptContext;
  readonly orderingKey: string;
  readonly stale: boolean;
  // Made only when the handlers read `signal` or the key's lease is lost: most attempts never need either.
  #lost: AbortController | undefined;
  #signal: AbortSignal | undefined;

  constructor(attempt: AttemptContext, orderingKey: string, stale: boolean) {
    this.#attempt = attempt;
    this.orderingKey = orderingKey;
    this.stale = stale;
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

  lose(reason: WebhookError): void {
    this.#lost ??= new AbortController();
    this.#lost.abort(reason);
  }
}

/**
 * Builds the receiver's ordering from its options.
 * @example
 * const ordering = createOrdering({ ...options.ordering, store: store.ordering, leaseMs, doneTtlMs, logger, onStale });
 */
export function createOrdering({
  key = byDefaultKeys(),
  stale = 'skip',
  maxWaitMs = 5 * 60_000,
  store,
  leaseMs,
  doneTtlMs,
  logger,
  onStale,
}: OrderingSetup): Ordering {
  if (store === undefined)
    throw new ConfigurationError(
      'ordering needs a store that keeps watermarks (every store of this package does)',
    );
  if (typeof key !== 'function') throw new ConfigurationError('ordering.key must be a function');
  if (stale !== 'skip' && stale !== 'run')
    throw new ConfigurationError(`ordering.stale must be 'skip' or 'run'`);
  if (!Number.isFinite(maxWaitMs) || maxWaitMs <= 0)
    throw new ConfigurationError('ordering.maxWaitMs must be a positive number');

  // In-process wake-ups: events waiting for a key this process gives up go at once, not at their next look.
  const gates = new Map<string, { readonly opened: Promise<void>; readonly open: () => void }>();
  const wake = (orderingKey: string): void => {
    const gate = gates.get(orderingKey);
    gates.delete(orderingKey);
    gate?.open();
  };
  // Opened by the key's next wake-up; made when the key is found busy, so a wake before anyone waits is not lost. A
  // gate goes only with a wake: one is never made for a durable queue's event (see `wrap`).
  const gateOf = (orderingKey: string): Promise<void> => {
    let gate = gates.get(orderingKey);
    if (gate === undefined) {
      let open!: () => void;
      const opened = new Promise<void>((resolve) => {
        open = resolve;
      });
      gate = { opened, open };
      gates.set(orderingKey, gate);
    }
    return gate.opened;
  };
  // The gate (when there is one), or `ms` at the most.
  const freed = (opened: Promise<void> | undefined, ms: number): Promise<void> =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      void opened?.then(() => {
        clearTimeout(timer);
        resolve();
      });
    });

  const reportStale = async (event: WorkforceEvent, watermark: string): Promise<void> => {
    const newer = markedEvent(watermark);
    logger.info(
      { eventId: event.id, type: event.type, newerEventId: newer.id },
      'workforce-webhooks: stale event skipped (a newer one of its record was handled)',
    );
    try {
      await onStale?.(event, newer);
    } catch (error) {
      logger.error({ err: error }, 'workforce-webhooks: onStale threw');
    }
  };

  // Moves the key's watermark and gives the key up; never rejects. No promise when the store answers at once.
  const leave = (
    orderingKey: string,
    event: WorkforceEvent,
    mark: string | undefined,
  ): Promise<void> | undefined => {
    const failed = (error: unknown): void => {
      // The key's lease then lapses by itself; a watermark not moved only lets an older event run.
      logger.error(
        { eventId: event.id, err: error },
        'workforce-webhooks: could not give up an ordering key',
      );
      wake(orderingKey);
    };
    let left: boolean | Promise<boolean>;
    try {
      left = store.leave(orderingKey, event.id, mark, doneTtlMs);
    } catch (error) {
      failed(error);
      return undefined;
    }
    if (!isPromise(left)) {
      wake(orderingKey);
      return undefined;
    }
    return left.then(() => wake(orderingKey), failed);
  };

  const hold = async (orderingKey: string, event: WorkforceEvent): Promise<void> => {
    try {
      await store.hold(orderingKey, event.id, maxWaitMs);
    } catch (error) {
      logger.error({ eventId: event.id, err: error }, 'workforce-webhooks: could not hold an ordering key');
    } finally {
      // Waiters look again: the hold may already have passed its bound.
      wake(orderingKey);
    }
  };

  const skip = async (orderingKey: string, event: WorkforceEvent, watermark: string): Promise<void> => {
    await leave(orderingKey, event, undefined);
    await reportStale(event, watermark);
  };

  // Renews the leases of the keys whose handlers run, every third of a lease, from one timer for all of them: a
  // timer per event costs more than the rest of its ordering work.
  const held = new Map<WorkforceEvent, { readonly orderingKey: string; readonly attempt: OrderedAttempt }>();
  let renewing: ReturnType<typeof setInterval> | undefined;
  const renewAll = (): void => {
    if (held.size === 0) {
      clearInterval(renewing);
      renewing = undefined;
      return;
    }
    for (const [event, { orderingKey, attempt }] of held) {
      Promise.resolve()
        .then(() => store.enter(orderingKey, event.id, leaseMs))
        .then(
          (entry) => {
            if (entry.status !== 'busy' || !held.has(event)) return;
            held.delete(event);
            logger.error(
              { eventId: event.id },
              'workforce-webhooks: the ordering key lease was lost to another event of the key while handlers ran; their signal is aborted',
            );
            attempt.lose(
              new WebhookError(
                'lease_lost',
                "another event of this record took the key's lease (it lapsed); stop and leave the record to it",
              ),
            );
          },
          (error: unknown) =>
            logger.warn(
              { eventId: event.id, err: error },
              'workforce-webhooks: ordering lease renewal failed',
            ),
        );
    }
  };
  const keep = (orderingKey: string, event: WorkforceEvent, attempt: OrderedAttempt): void => {
    held.set(event, { orderingKey, attempt });
    if (renewing === undefined) {
      renewing = setInterval(renewAll, leaseMs / 3);
      renewing.unref?.();
    }
  };

  // An event whose occurredAt is not a date (the envelope check lets few through) is not ordered: see `wrap`.
  const keyOf = (event: WorkforceEvent): string | undefined => asKey(key(event));

  return {
    keyOf,
    staleOnArrival(event, watermark) {
      if (stale !== 'skip' || watermark === undefined) return false;
      const mark = markOf(event);
      if (mark === undefined || mark > watermark) return false;
      void reportStale(event, watermark);
      return true;
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
      ): Promise<void> => {
        if (entry.status === 'busy') return waitForKey(job, attempt, orderingKey, mark, entry);
        const { event } = job;
        const { watermark } = entry;
        const isStale = watermark !== undefined && mark <= watermark;
        // Not run, not retried, not dead-lettered: the newer event's handlers already brought the record on.
        if (isStale && stale === 'skip') return skip(orderingKey, event, watermark);
        const ordered = new OrderedAttempt(attempt, orderingKey, isStale);
        keep(orderingKey, event, ordered);
        let ran: Promise<void>;
        try {
          ran = process(job, ordered);
        } catch (error) {
          ran = Promise.reject(error);
        }
        return ran.then(
          () => {
            held.delete(event);
            return leave(orderingKey, event, mark);
          },
          async (error: unknown) => {
            held.delete(event);
            await hold(orderingKey, event);
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
      ): Promise<void> => {
        let entry = busy;
        while (entry.status === 'busy') {
          const { retryInMs } = entry;
          if (waits === 'durable') {
            // The event may run next on another instance, and the key be given up there: a gate made here would
            // wait for a wake that never comes, and stay. A durable queue reads `retryInMs`; `ready` uses a gate
            // another event of this process made, or the delay alone.
            const delay = Math.min(retryInMs, POLL_MS + Math.random() * POLL_MS);
            throw new OrderingWait(Math.round(delay), () => freed(gates.get(orderingKey)?.opened, retryInMs));
          }
          const opened = gateOf(orderingKey);
          if (waits === 'local') throw new OrderingWait(retryInMs, () => freed(opened, retryInMs));
          await freed(opened, retryInMs);
          entry = await store.enter(orderingKey, job.event.id, leaseMs);
        }
        return run(job, attempt, orderingKey, mark, entry);
      };
      return (job, attempt) => {
        const { event } = job;
        const orderingKey = keyOf(event);
        const mark = orderingKey === undefined ? undefined : markOf(event);
        if (orderingKey === undefined || mark === undefined) return process(job, attempt);
        let entry: KeyEntry | Promise<KeyEntry>;
        try {
          entry = store.enter(orderingKey, event.id, leaseMs);
        } catch (error) {
          return Promise.reject(error);
        }
        return isPromise(entry)
          ? entry.then((found) => run(job, attempt, orderingKey, mark, found))
          : run(job, attempt, orderingKey, mark, entry);
      };
    },
    async deadLettered(letter) {
      const orderingKey = keyOf(letter.event);
      if (orderingKey !== undefined && markOf(letter.event) !== undefined)
        await leave(orderingKey, letter.event, undefined);
    },
  };
}
