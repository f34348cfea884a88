// The event types: one map from event type to payload, and the shapes derived from it.
import type { ApiClient } from '../api/client.js';
import type { Logger } from './logger.js';
import type { HandlerTransaction } from './transaction.js';

/** `data` of `leave.approved` (spec "Delivery format"). Dates are calendar dates written `YYYY-MM-DDT00:00:00`, no zone. */
export type LeaveApprovedData = {
  readonly leaveRequestId: string;
  readonly employeeId: string;
  readonly leaveTypeId: string;
  /** The leave type's name. */
  readonly leaveType: string;
  /** Calendar date as sent (`YYYY-MM-DDT00:00:00`); never turn it into a `Date` in the local zone. */
  readonly startDate: string;
  readonly endDate: string;
  readonly status: 'Approved';
};

/** `data` of `attendance.absence_report.completed`: `reportId` is the `{id}` of `GET /v1/attendance/report/{id}`. */
export type AbsenceReportCompletedData = {
  readonly reportId: string;
  readonly [field: string]: unknown;
};

/** Payload shape of an event type the spec does not detail yet. */
export type UnknownEventData = Record<string, unknown>;

/** The 15 event types the spec names, with the payloads it documents. */
export interface SpecEventDataMap {
  'webhook.test': UnknownEventData;
  'leave.requested': UnknownEventData;
  'leave.approved': LeaveApprovedData;
  'leave.rejected': UnknownEventData;
  'leave.cancelled': UnknownEventData;
  'attendance.exception.approved': UnknownEventData;
  'attendance.absence_report.completed': AbsenceReportCompletedData;
  'employee.created': UnknownEventData;
  'employee.terminated': UnknownEventData;
  'payroll.paid': UnknownEventData;
  'payroll.transfer_failed': UnknownEventData;
  'loan.disbursed': UnknownEventData;
  'candidate.stage_changed': UnknownEventData;
  'offer.accepted': UnknownEventData;
  'approval.completed': UnknownEventData;
}

/**
 * Event type to `data` shape. Extend it by declaration merging, to add types or to give a named type its
 * fields (write payloads as type literals: `Record<string, unknown>` must accept them):
 * @example
 * declare module 'workforce-webhooks' { interface EventDataMap { 'payroll.paid': { payrollId: string } } }
 */
export interface EventDataMap extends SpecEventDataMap {}

/**
 * One event as the service sends it (spec "Delivery format"), typed by its `type`.
 * @example
 * const e: WorkforceEvent<'leave.approved'> = ...; e.data.employeeId;
 */
export interface WorkforceEvent<
  T extends string = string,
  D = T extends keyof EventDataMap ? EventDataMap[T] : UnknownEventData,
> {
  /** Event id: the same on every retry and redelivery; the dedupe key. */
  readonly id: string;
  readonly type: T;
  /** Format version, `2026-10-15` today; other values are accepted and logged once. */
  readonly apiVersion: string;
  /** When it happened, UTC with fractional seconds. Events can arrive out of order (spec rule 4). */
  readonly occurredAt: string;
  readonly organizationId: string;
  readonly data: D;
}

/** The event types of a map, as strings. */
export type EventName<M> = keyof M & string;

type DataOf<M, T extends string> = T extends keyof M ? M[T] : UnknownEventData;

/** The event a handler for type (or union of types) `T` receives, one member per type. */
export type EventOf<M, T extends string> = T extends string ? WorkforceEvent<T, DataOf<M, T>> : never;

/** Every dotted prefix of a type: `attendance.exception.approved` gives `attendance` and `attendance.exception`. */
type Prefixes<T extends string> = T extends `${infer Head}.${infer Rest}`
  ? Head | `${Head}.${Prefixes<Rest>}`
  : never;

declare const unknownTypeBrand: unique symbol;

/**
 * An event type (or `prefix.*`) the map does not name, marked on purpose with `unknownType('x.y')`: the one way
 * past `on()`'s check, so a typo never is. Its events are typed loosely (`data: Record<string, unknown>`).
 */
export type UnknownEventType<T extends string = string> = T & { readonly [unknownTypeBrand]: T };

/**
 * What `on` accepts: a type of the map, a `prefix.*` of its types, `'*'` (every event, as `onAny`), or an
 * `unknownType(...)`. Any other string is a compile error, as Octokit refuses `'issues.opend'`.
 */
export type EventPattern<M> = EventName<M> | `${Prefixes<EventName<M>>}.*` | '*' | UnknownEventType;

/**
 * The types a pattern selects: `leave.*` gives every `leave.` type of the map; `'*'` any type (`string`); an
 * unknown type gives itself.
 */
export type TypesOf<M, P extends string> =
  P extends UnknownEventType<infer T> ? LooseTypesOf<M, T> : LooseTypesOf<M, P>;

// `'*'` is the registry's catch-all, run for every event: its events' type is any string, never the text '*'.
type LooseTypesOf<M, P extends string> = P extends '*'
  ? string
  : P extends `${infer Prefix}.*`
    ? [Extract<EventName<M>, `${Prefix}.${string}`>] extends [never]
      ? string
      : Extract<EventName<M>, `${Prefix}.${string}`>
    : P;

/** What a handler is given beside the event. */
export interface HandlerContext {
  /** `Svc-Delivery-Id` of the delivery that brought the event (a redelivery has a new one). */
  readonly deliveryId: string | undefined;
  /**
   * 1 on the first run, then 2, 3... on the queue's retries. In inline mode a failure is answered 500 and the sender's
   * retry is a new delivery (a new `deliveryId`), so it starts at 1 again; only a run handed to the queue past
   * `ackDeadlineMs` goes on at 2.
   */
  readonly attempt: number;
  /** Aborted when the attempt times out or the receiver shuts down: pass it to `fetch` and friends. */
  readonly signal: AbortSignal;
  readonly logger: Logger;
  /** With `createReceiver({ ordering })`: the record key the event was ordered by; undefined when not ordered. */
  readonly orderingKey: string | undefined;
  /** With `ordering.stale: 'run'`: true when a newer event of the same key was already handled. */
  readonly stale: boolean;
  /**
   * The read-API client given to `createReceiver({ api })`, to fetch the current record rather than trust
   * the order of events (spec rule 4). Reading it when no client was given throws a `ConfigurationError`.
   */
  readonly api: ApiClient;
  /**
   * The event's database transaction (with `workforce-webhooks/postgres`, a `pg` client inside `BEGIN`), opened
   * by the attempt's first call and shared by its handlers. The receiver commits it with the event's done mark
   * once every handler succeeded, and rolls it back on a failure, a timeout or a crash, so its writes happen
   * exactly once. Rejects with a `ConfigurationError` when the store has no transactions.
   */
  transaction(): Promise<HandlerTransaction>;
}

/** A function run for matching events; throw (or reject) to have it retried. */
export type Handler<E = WorkforceEvent> = (event: E, ctx: HandlerContext) => unknown;

/**
 * Called with every handler failure (each attempt), and with the event when there is one; not awaited: the attempt
 * neither waits for it nor fails with it, and what it throws or rejects with is logged.
 * @example
 * const onError: ErrorHandler = (error, event) => tracker.capture(error, { eventId: event?.id });
 */
export type ErrorHandler = (error: unknown, event: WorkforceEvent | undefined) => unknown;
