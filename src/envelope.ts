// The event envelope (spec "Delivery format"): decode, parse and check a verified body.
import { InvalidPayloadError } from './errors.js';
import { type HeadersInput, headerValue } from './headers.js';
import { isUuid } from './hex.js';
import type { WorkforceEvent } from './types.js';

// Not fatal: a stray invalid byte in a string becomes U+FFFD rather than losing the whole event.
const decoder = new TextDecoder();
// Spec: occurredAt is a datetime "UTC, with fractional seconds": an RFC 3339 date-time (section 5.6: a `T`, a
// fraction of any length, `Z` or a `+hh:mm` offset; `t` and `z` too, as section 5.6 allows), every field in range.
// Not Date.parse: it reads '1' or 'Tue Nov 24 2026' as local dates, which ordering would rank among real instants.
// A leap second (`:60`, section 5.7) is taken: refused, its event would be lost once the sender's retries end.
// Ordering and telemetry read it as the last nanosecond before it (`withoutLeapSecond`).
const DATE_TIME =
  /^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])[Tt](?:[01]\d|2[0-3]):[0-5]\d:(?:[0-5]\d|60)(?:\.\d+)?(?:[Zz]|[+-](?:[01]\d|2[0-3]):[0-5]\d)$/;

// The shapes of the spec's event types and versions: text in them can be logged without quoting a body.
const TYPE_SHAPE = /^[a-z][a-z0-9_]{0,39}(\.[a-z][a-z0-9_]{0,39}){1,4}$/;
const API_VERSION_SHAPE = /^\d{4}-\d{2}-\d{2}$/;
// Spec "Delivery format": the service's `User-Agent` is `Svc-Webhooks/<version>`.
const SERVICE_AGENT = /^Svc-Webhooks\//i;
// JSON's whitespace (RFC 8259: space, tab, line feed, carriage return), and the `{` an envelope opens with.
const WHITESPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);
const OPEN_BRACE = 0x7b;
// The largest body whose envelope an unsigned request is parsed to find: the service's envelopes are a few hundred
// bytes (ids, a type, dates), and a flood of unsigned bodies up to maxBodyBytes must not cost a whole parse each.
const MAX_SNIFFED_BODY_BYTES = 64 * 1024;

/** The `apiVersion` this package was written against. */
export const CURRENT_API_VERSION = '2026-10-15';

/**
 * Parses a verified body into an event and checks its envelope, its `id` written lowercase; `Svc-Event-Id` /
 * `Svc-Event-Type`, when sent, must equal the body's `id` (in either case) / `type` (they are not signed, so routing
 * and dedupe use the body).
 * Throws `InvalidPayloadError`.
 * @example
 * const event = parseEvent(rawBody, req.headers);
 */
export function parseEvent(body: Uint8Array, headers?: HeadersInput): WorkforceEvent {
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(body));
  } catch (error) {
    // Not `{ cause: error }`: JSON.parse's message quotes the body (`Unexpected token 's', "ssn=123-45"...`), and
    // an error goes to logs. Its class and position say what went wrong without a byte of the body.
    throw new InvalidPayloadError(`the body is not JSON (${jsonErrorShape(error)})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    fail('the body is not a JSON object');
  const event = value as Record<string, unknown>;
  if (typeof event.id !== 'string' || !isUuid(event.id)) fail('id must be a uuid');
  // One uuid in either case is one event (RFC 9562: hex digits are case-insensitive on input, written lowercase):
  // dedupe, ordering's ties and job ids key on the id as text, and an uppercase copy of an id would run it twice.
  // An id already lowercase (the service's) comes back as the same string: nothing allocated.
  event.id = event.id.toLowerCase();
  if (typeof event.type !== 'string' || event.type === '') fail('type must be a non-empty string');
  if (typeof event.apiVersion !== 'string' || event.apiVersion === '') fail('apiVersion must be a string');
  const { occurredAt } = event;
  if (typeof occurredAt !== 'string' || !isDateTime(occurredAt)) {
    fail('occurredAt must be an RFC 3339 date-time');
  }
  if (typeof event.organizationId !== 'string' || !isUuid(event.organizationId)) {
    fail('organizationId must be a uuid');
  }
  if (typeof event.data !== 'object' || event.data === null || Array.isArray(event.data)) {
    fail('data must be an object');
  }
  if (headers !== undefined) {
    const headerId = headerValue(headers, 'svc-event-id');
    if (headerId !== undefined && headerId.toLowerCase() !== event.id)
      fail('Svc-Event-Id does not equal the body id');
    const headerType = headerValue(headers, 'svc-event-type');
    if (headerType !== undefined && headerType !== event.type)
      fail('Svc-Event-Type does not equal the body type');
  }
  return event as unknown as WorkforceEvent;
}

/**
 * Whether a request refused for its signature header is the service's own or a faithful test's: its `User-Agent`,
 * one of its `Svc-Event-Id` / `Svc-Event-Type` / `Svc-Delivery-Id` headers, or an event envelope of at most 64 KiB
 * as body (a scanner's bare POST has none; a larger body is not parsed to learn it).
 * @example
 * if (isServiceDelivery(body, req.headers)) report.refused('missing_signature');
 */
export function isServiceDelivery(body: Uint8Array, headers: HeadersInput): boolean {
  if (
    headerValue(headers, 'svc-event-id') !== undefined ||
    headerValue(headers, 'svc-event-type') !== undefined ||
    headerValue(headers, 'svc-delivery-id') !== undefined ||
    SERVICE_AGENT.test(headerValue(headers, 'user-agent') ?? '')
  )
    return true;
  // Every custom header stripped (some proxies forward only a known list): the body still says whose it is. A body
  // that does not open with `{` (a form, a page, nothing) is no envelope, and is not decoded to learn it; nor is one
  // far larger than any envelope the service sends.
  if (body.byteLength > MAX_SNIFFED_BODY_BYTES) return false;
  let at = 0;
  while (at < body.byteLength && WHITESPACE.has(body[at]!)) at++;
  if (body[at] !== OPEN_BRACE) return false;
  try {
    parseEvent(body);
    return true;
  } catch {
    return false;
  }
}

// `SyntaxError at position 7`, from V8's messages (`... in JSON at position 7`); other engines may give no position.
function jsonErrorShape(error: unknown): string {
  const name = error instanceof Error ? error.name : typeof error;
  const position = error instanceof Error ? / at position (\d+)/.exec(error.message)?.[1] : undefined;
  return position === undefined ? name : `${name} at position ${position}`;
}

/**
 * What of an event a log line may carry: its id (a checked uuid) and its type when it has the spec's shape
 * (`leave.approved`); any other text of a body never reaches a log.
 * @example
 * logger.debug(eventLogFields(event), 'workforce-webhooks: no handler for this type, ignored');
 */
export function eventLogFields(event: Pick<WorkforceEvent, 'id' | 'type'>): {
  readonly eventId: string;
  readonly type?: string;
} {
  return TYPE_SHAPE.test(event.type) ? { eventId: event.id, type: event.type } : { eventId: event.id };
}

/**
 * The `apiVersion` as a log line may carry it: only a date (`2026-10-15`, the spec's shape), else undefined.
 * @example
 * warnOnce(`api_version:${v}`, { apiVersion: loggableApiVersion(v) }, 'unknown apiVersion, accepted');
 */
export function loggableApiVersion(apiVersion: string): string | undefined {
  return API_VERSION_SHAPE.test(apiVersion) ? apiVersion : undefined;
}

// The date-time's shape, and a day its month has: the shape lets any month have a 29th to a 31st, which
// Date.parse would carry over (February 30 as March 2). Only those days pay for the calendar.
function isDateTime(value: string): boolean {
  if (!DATE_TIME.test(value)) return false;
  const day = (value.charCodeAt(8) - 48) * 10 + value.charCodeAt(9) - 48;
  return day <= 28 || day <= daysInMonth(Number(value.slice(0, 4)), Number(value.slice(5, 7)));
}

// Proleptic Gregorian, as RFC 3339 dates are (year 0000 included).
function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

function fail(reason: string): never {
  throw new InvalidPayloadError(`the verified body is not an event envelope: ${reason}`);
}
