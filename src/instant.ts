// An envelope date-time's instant in milliseconds, read alike whatever the length of its fraction.

// A fraction past nine digits (nanoseconds): the rest says nothing a millisecond instant keeps.
const LONG_FRACTION = /\.(\d{9})\d+/;
// A leap second (RFC 3339 section 5.7: `23:59:60Z`, or its local time with an offset) and its fraction.
const LEAP_SECOND = /^(.{17})60(?:\.\d*)?/;

/**
 * The date-time as `Date.parse` reads it: a leap second (`:60`, which `Date.parse` refuses) as the last nanosecond
 * of the second before it (`:59.999999999`), between that second and the next minute, so a leap second's events keep
 * their place among the others (among themselves they tie, broken by event id). Any other date-time is itself.
 * @example
 * withoutLeapSecond('2016-12-31T23:59:60.5Z'); // '2016-12-31T23:59:59.999999999Z'
 */
export function withoutLeapSecond(dateTime: string): string {
  // Seconds sit at characters 17 and 18 of every envelope date-time (`YYYY-MM-DDTHH:MM:SS`).
  return dateTime.charCodeAt(17) === 54 ? dateTime.replace(LEAP_SECOND, '$159.999999999') : dateTime;
}

/**
 * `Date.parse` of an RFC 3339 date-time, with a fraction past nine digits cut to nine first: V8 misreads a fraction
 * of ten digits or more that starts with a zero (`.0123456789` as 123 ms, not 12). The longest date-time with nine
 * digits and `Z` has 30 characters, so the usual ones are parsed as they are. A leap second is read as
 * `withoutLeapSecond` says.
 * @example
 * instantOf('2026-11-24T10:00:00.0123456789Z') - instantOf('2026-11-24T10:00:00Z'); // 12
 */
export function instantOf(dateTime: string): number {
  const read = withoutLeapSecond(dateTime);
  return Date.parse(read.length > 30 ? read.replace(LONG_FRACTION, '.$1') : read);
}
