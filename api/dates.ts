// Calendar dates as strings: leave dates come as `YYYY-MM-DDT00:00:00` with no zone and must never shift.

const CALENDAR = /^(\d{4})-(\d{2})-(\d{2})(?:T00:00:00(?:\.0+)?)?$/;

/** A calendar date written `YYYY-MM-DD`: a day, not an instant, so no time zone can move it. */
export type CalendarDate = string;

/**
 * The `YYYY-MM-DD` of a date the service sent (`2026-03-02` or `2026-03-02T00:00:00`), without ever building a
 * `Date` in the local zone; throws on anything else.
 * @example
 * toCalendarDate(event.data.startDate) // '2026-03-02', whatever TZ the process runs in
 */
export function toCalendarDate(value: string): CalendarDate {
  const match = CALENDAR.exec(value);
  if (match === null || !isRealDay(Number(match[1]), Number(match[2]), Number(match[3]))) {
    throw new TypeError(`workforce-webhooks: ${JSON.stringify(value)} is not a calendar date (YYYY-MM-DD)`);
  }
  return value.slice(0, 10);
}

/**
 * True for a real day written exactly `YYYY-MM-DD` (2026-02-30 is not one).
 * @example
 * isCalendarDate('2026-02-28') // true
 */
export function isCalendarDate(value: unknown): value is CalendarDate {
  if (typeof value !== 'string' || value.length !== 10) return false;
  const match = CALENDAR.exec(value);
  return match !== null && isRealDay(Number(match[1]), Number(match[2]), Number(match[3]));
}

function isRealDay(year: number, month: number, day: number): boolean {
  // Date.UTC, never the local zone: only used to know how long the month is.
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/**
 * The same date with its optional zone-less midnight removed, or undefined/absent values as they are.
 * @example
 * optionalCalendarDate(undefined) // undefined
 */
export function optionalCalendarDate(value: string | undefined | null): CalendarDate | undefined {
  return value === undefined || value === null ? undefined : toCalendarDate(value);
}
