// Calendar arithmetic on `YYYY-MM-DD` strings in UTC, so the mock's dates never move with the local zone.
import { WEEKDAYS } from '../../api/statuses.js';

/**
 * The date `days` after `date` (negative: before).
 * @example
 * addDays('2026-02-27', 2) // '2026-03-01'
 */
export function addDays(date: string, days: number): string {
  const at = new Date(`${date}T00:00:00Z`);
  at.setUTCDate(at.getUTCDate() + days);
  return at.toISOString().slice(0, 10);
}

/**
 * The weekday name of a date.
 * @example
 * weekday('2026-03-02') // 'Monday'
 */
export function weekday(date: string): string {
  return WEEKDAYS[new Date(`${date}T00:00:00Z`).getUTCDay()]!;
}

/**
 * True on Saturday and Sunday.
 * @example
 * isWeekend('2026-03-07') // true
 */
export function isWeekend(date: string): boolean {
  const day = new Date(`${date}T00:00:00Z`).getUTCDay();
  return day === 0 || day === 6;
}

/**
 * Every date from `start` to `end`, both included.
 * @example
 * eachDay('2026-03-01', '2026-03-03') // ['2026-03-01', '2026-03-02', '2026-03-03']
 */
export function eachDay(start: string, end: string): string[] {
  const days: string[] = [];
  for (let day = start; day <= end; day = addDays(day, 1)) days.push(day);
  return days;
}

/**
 * A leave date as the service writes it: the calendar date with time `00:00:00` and no zone.
 * @example
 * leaveDate('2026-03-02') // '2026-03-02T00:00:00'
 */
export function leaveDate(date: string): string {
  return `${date}T00:00:00`;
}

/**
 * The day a recurring `MM-DD` falls on in `year`: Feb 29 falls on Feb 28 in a common year, so a leap-day
 * holiday stays in February and is never a day the calendar lacks.
 * @example
 * recurringDay('02-29', 2027) // '2027-02-28'
 */
export function recurringDay(monthDay: string, year: number): string {
  const day = monthDay === '02-29' && !isLeapYear(year) ? '02-28' : monthDay;
  return `${String(year).padStart(4, '0')}-${day}`;
}

/**
 * True for a Gregorian leap year: every fourth year, except centuries not divisible by 400.
 * @example
 * isLeapYear(2028) // true
 */
export function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}
