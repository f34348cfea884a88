// An envelope date-time's instant in milliseconds, read alike whatever the length of its fraction.

// A fraction past nine digits (nanoseconds): the rest says nothing a millisecond instant keeps.
const LONG_FRACTION = /\.(\d{9})\d+/;

/**
 * `Date.parse` of an RFC 3339 date-time, with a fraction past nine digits cut to nine first: V8 misreads a fraction
 * of ten digits or more that starts with a zero (`.0123456789` as 123 ms, not 12). The longest date-time with nine
 * digits and `Z` has 30 characters, so the usual ones are parsed as they are.
 * @example
 * instantOf('2026-11-24T10:00:00.0123456789Z') - instantOf('2026-11-24T10:00:00Z'); // 12
 */
export function instantOf(dateTime: string): number {
  return Date.parse(dateTime.length > 30 ? dateTime.replace(LONG_FRACTION, '.$1') : dateTime);
}
