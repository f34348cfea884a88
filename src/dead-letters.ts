// Dead letters and how they are read: one page at a time, newest first, the same for every queue.
import { ConfigurationError } from './errors.js';
import type { EventName, EventOf, EventPattern, WorkforceEvent } from './types.js';

/**
 * The event of a receiver's dead letter, for its event map `M`: one member per type of the map, narrowed by
 * `event.type` as in `on()`'s handlers. A letter of a type the map does not name (kept for an `unknownType` or `'*'`
 * handler) comes too: end a `switch` on it with a `default` that does not throw.
 * @example
 * if (letter.event.type === 'leave.approved') console.log(letter.event.data.employeeId);
 */
export type DeadLetterEvent<M> = EventOf<M, EventName<M>>;

/**
 * What a dead-letter filter of a receiver typed by the event map `M` takes as `type`: a type of the map, a `prefix.*`
 * of its types, or an `unknownType(...)` (`'*'` is no filter: leave `type` out for every type).
 * @example
 * const type: DeadLetterPattern<EventDataMap> = 'leave.*';
 */
export type DeadLetterPattern<M> = Exclude<EventPattern<M>, '*'>;

/**
 * The `type` a receiver's dead-letter filter takes, given the `T` written: `T` when it is a `DeadLetterPattern<M>`, any
 * string known only at run time (an operator's input, checked when the filter is read), and otherwise the patterns of
 * the map, so that a misspelt type is a compile error rather than a filter that matches no letter.
 * @example
 * receiver.replayDeadLetters({ type: 'leave.aproved' }); // error: did you mean 'leave.approved'?
 */
export type DeadLetterType<M, T extends string> = string extends T
  ? string
  : T extends DeadLetterPattern<M>
    ? T
    : DeadLetterPattern<M>;

/**
 * An event whose handlers failed every attempt; kept for `receiver.deadLetters()` and `replay()`. A queue, which knows
 * no event map, holds any event; a receiver's letters hold its map's (`DeadLetter<DeadLetterEvent<M>>`).
 */
export interface DeadLetter<E = WorkforceEvent> {
  readonly event: E;
  readonly deliveryId: string | undefined;
  /** The attempts made (0 for an event `close()` gave up before its first). */
  readonly attempts: number;
  /**
   * The last failure, as thrown when `onDeadLetter` gets it; the memory queue keeps a light copy (its class, message,
   * stack, code and other plain fields, cause chain and `errors`, not the objects it held, such as a response).
   */
  readonly error: unknown;
  /** Milliseconds since the epoch. */
  readonly failedAt: number;
  /**
   * Set when `close()` gave the event up while it waited (queued, between two attempts, or for its ordering key)
   * rather than when an attempt failed: `error` is the shutdown, and no attempt ended in this letter.
   */
  readonly waiting?: true;
  /**
   * With `createReceiver({ telemetry })`: the queued event's `trace` (a `TraceLink`, spelled out here as queue.ts
   * imports this file), the accepting delivery's link, which a replay's attempts keep.
   */
  readonly trace?: Readonly<Record<string, string>>;
}

/** A point in time: a `Date`, epoch milliseconds or an ISO 8601 string. */
export type DeadLetterTime = Date | number | string;

/**
 * Which dead letters a read, a replay or a discard takes: every one when empty. `T` is what `type` takes: any string
 * for a queue, which knows no map; the patterns of its map for a receiver (see `DeadLetterType`).
 * @example
 * await receiver.replayDeadLetters({ type: 'leave.*', since: '2026-11-23T00:00:00Z' });
 */
export interface DeadLetterFilter<T extends string = string> {
  /** Only events of this type, or of a `prefix.*` pattern (`leave.*`). */
  readonly type?: T;
  /** Only letters whose last failure was at or after this time. */
  readonly since?: DeadLetterTime;
  /** Only letters whose last failure was before this time. */
  readonly until?: DeadLetterTime;
}

/**
 * What `deadLetters` reads. An object, so that filters can join `limit` and `cursor` without a breaking change.
 * @example
 * const first = await receiver.deadLetters({ limit: 50 });
 * const next = await receiver.deadLetters({ limit: 50, cursor: first.cursor });
 */
export interface DeadLetterQuery<T extends string = string> extends DeadLetterFilter<T> {
  /** Dead letters per page. Default 100, at most 1 000 (a larger value reads 1 000). */
  readonly limit?: number;
  /**
   * The `cursor` of the previous page, to read the next (older) one; none for the newest. A malformed cursor, or
   * one the memory queue never gave, is refused with a `ConfigurationError`.
   */
  readonly cursor?: string;
}

/**
 * One page of dead letters, newest first, of events `E` (see `DeadLetter`). With a filter, a page may hold
 * fewer than `limit` letters (even none) while more follow: a read looks at a bounded number of letters; go on while
 * `cursor` is set.
 */
export interface DeadLetterPage<E = WorkforceEvent> {
  readonly items: readonly DeadLetter<E>[];
  /** Gives the next, older page to `deadLetters({ cursor })` (with the same filters); undefined when there is none. */
  readonly cursor: string | undefined;
}

/** Dead letters per page when `limit` is not given. */
export const DEFAULT_DEAD_LETTER_LIMIT = 100;
/** The most dead letters one page holds: a read is bounded however many are kept. */
export const MAX_DEAD_LETTER_LIMIT = 1000;

/**
 * The keys a bulk replay or discard filters by.
 * @example
 * unknownKey(filter, FILTER_KEYS); // undefined for { type: 'leave.*' }
 */
export const FILTER_KEYS: readonly string[] = ['type', 'since', 'until'];
const QUERY_KEYS: readonly string[] = [...FILTER_KEYS, 'limit', 'cursor'];

/**
 * The first key `given` sets (to anything but undefined) that is not one of `known`, or undefined when there is none.
 * @example
 * unknownKey({ eventId: 'e1' }, FILTER_KEYS); // 'eventId'
 */
export function unknownKey(given: object, known: readonly string[]): string | undefined {
  for (const key of Object.keys(given))
    if (!known.includes(key) && (given as Record<string, unknown>)[key] !== undefined) return key;
  return undefined;
}

/**
 * The page size a query asks for, with the default and the ceiling applied; throws on a limit that is not a positive
 * integer, and on a key that is no part of a query.
 * @example
 * pageLimit({ limit: 5000 }); // 1000
 */
export function pageLimit(query: DeadLetterQuery = {}): number {
  // From JavaScript: `null` would fail as a TypeError of this package's code, and a bare type ('leave.*') would read
  // every letter, unfiltered.
  if (typeof query !== 'object' || query === null)
    throw new ConfigurationError(
      'deadLetters takes an object or nothing, e.g. { limit: 50, type: "leave.*" }',
    );
  // A misspelt filter (`{ types: 'leave.*' }`, `{ eventId }`) would read every letter as if it matched.
  const unknown = unknownKey(query, QUERY_KEYS);
  if (unknown !== undefined)
    throw new ConfigurationError(
      `deadLetters takes ${QUERY_KEYS.join(', ')}, not ${unknown}; e.g. { type: "leave.*", since: "2026-11-23T00:00:00Z" }`,
    );
  const { limit = DEFAULT_DEAD_LETTER_LIMIT } = query;
  if (!Number.isInteger(limit) || limit < 1)
    throw new ConfigurationError('deadLetters limit must be a positive integer');
  return Math.min(limit, MAX_DEAD_LETTER_LIMIT);
}

/** A query's filters, checked: the failure-time window in epoch milliseconds and the type test. */
export interface CheckedDeadLetterFilter {
  /** Earliest failure time kept (inclusive). */
  readonly since: number;
  /** Failure times from this one on are left out. */
  readonly until: number;
  /** Whether an event type passes the query's `type`. */
  readonly type: (eventType: string) => boolean;
  /** Whether anything but time is filtered (a read then looks at letters it will not return). */
  readonly byType: boolean;
}

const time = (value: DeadLetterTime | undefined, name: string, fallback: number): number => {
  if (value === undefined) return fallback;
  // A string is an ISO 8601 time (what the CLI's --since takes); a bare number in a string is not one.
  const ms =
    value instanceof Date
      ? value.getTime()
      : typeof value === 'string'
        ? /^\d{4}-\d{2}-\d{2}/.test(value)
          ? Date.parse(value)
          : Number.NaN
        : value;
  if (typeof ms !== 'number' || Number.isNaN(ms))
    throw new ConfigurationError(
      `deadLetters ${name} must be a Date, epoch milliseconds or an ISO 8601 time`,
    );
  return ms;
};

/**
 * The filters of a query, checked once for a read.
 * @example
 * const { since, until, type } = deadLetterFilter({ type: 'leave.*', since: new Date('2026-11-01') });
 */
export function deadLetterFilter({ type, since, until }: DeadLetterFilter = {}): CheckedDeadLetterFilter {
  // A `*` anywhere but in a final `.*` after a prefix (`*`, `leave*`, `*.approved`) matches no type: refused, rather than
  // answered as if no letter were kept.
  if (
    type !== undefined &&
    (typeof type !== 'string' ||
      type === '' ||
      (type.endsWith('.*') ? type.slice(0, -2) : type).includes('*') ||
      type === '.*')
  )
    throw new ConfigurationError(
      'deadLetters type must be an event type or a `prefix.*` pattern, e.g. "leave.approved" or "leave.*"; leave it out for every type',
    );
  const prefix = type?.endsWith('.*') ? type.slice(0, -1) : undefined;
  return {
    since: time(since, 'since', Number.NEGATIVE_INFINITY),
    until: time(until, 'until', Number.POSITIVE_INFINITY),
    type:
      type === undefined
        ? () => true
        : prefix === undefined
          ? (eventType) => eventType === type
          : (eventType) => eventType.startsWith(prefix),
    byType: type !== undefined,
  };
}

/**
 * The class an operator looks for in a failure: of a handler failure, its first handler error's.
 * @example
 * errorClassOf(new HandlerFailure([new TypeError('x')], [])); // 'TypeError'
 */
export function errorClassOf(error: unknown): string {
  // Read where failures are recorded (a catch block, a job's last error): a thrown value that throws when looked at
  // (a revoked Proxy, a getter that throws) must not replace the failure, so it is named by what is known of it.
  let known: string = typeof error;
  try {
    const inner = error instanceof AggregateError && error.errors.length > 0 ? error.errors[0] : error;
    known = typeof inner;
    if (!isError(inner)) return known;
    known = 'Error';
    // A subclass that does not set `name` still has its own constructor name.
    const name: unknown = inner.name === 'Error' ? inner.constructor?.name : inner.name;
    return typeof name === 'string' && name !== '' ? name : known;
  } catch {
    return known;
  }
}

// An Error of this realm, or of another (a `vm` context, an iframe), whose `instanceof Error` is false.
const isError = (value: unknown): value is Error =>
  value instanceof Error || Object.prototype.toString.call(value) === '[object Error]';
