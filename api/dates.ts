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
  const day = calendarDateOf(value);
  if (day === undefined) {
    throw new TypeError(`workforce-webhooks: ${JSON.stringify(value)} is not a calendar date (YYYY-MM-DD)`);
  }
  return day;
}

/**
 * The `YYYY-MM-DD` of a date the service sent (`2026-03-02` or `2026-03-02T00:00:00`), or undefined for anything
 * else; the one reading that `toCalendarDate` and the response shape checks share.
 * @example
 * calendarDateOf('2026-03-02T00:00:00') // '2026-03-02'
 */
export function calendarDateOf(value: unknown): CalendarDate | undefined {
  const match = typeof value === 'string' ? CALENDAR.exec(value) : null;
  if (match === null || !isRealDay(Number(match[1]), Number(match[2]), Number(match[3]))) return undefined;
  return match[0].slice(0, 10);
}

/**
 * True for a real day written exactly `YYYY-MM-DD` (2026-02-30 is not one).
 * @example
 * isCalendarDate('2026-02-28') // true
 */
export function isCalendarDate(value: unknown): value is CalendarDate {
  return typeof value === 'string' && value.length === 10 && calendarDateOf(value) !== undefined;
}

function isRealDay(year: number, month: number, day: number): boolean {
  // Date.UTC, never the local zone: only used to know how long the month is.
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}
