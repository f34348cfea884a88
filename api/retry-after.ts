// Reading `Retry-After`: delay-seconds or an HTTP date in any of the three forms RFC 9110 makes recipients accept.

/** The wait when `Retry-After` is absent or unreadable, as the README documents. */
const FALLBACK_MS = 1000;

const DAY = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const MONTH = '(?<month>Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)';
const TIME = '(?<h>\\d{2}):(?<m>\\d{2}):(?<s>\\d{2})';
// RFC 9110 section 5.6.7: an HTTP date is an IMF-fixdate, and recipients must also accept the obsolete RFC 850
// and asctime forms. All three are UTC; the weekday is not checked (nothing in a wait depends on it).
const HTTP_DATES = [
  // IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`
  new RegExp(`^${DAY}, (?<day>\\d{2}) ${MONTH} (?<year>\\d{4}) ${TIME} GMT$`),
  // RFC 850: `Sunday, 06-Nov-94 08:49:37 GMT`
  new RegExp(
    `^(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day, (?<day>\\d{2})-${MONTH}-(?<yy>\\d{2}) ${TIME} GMT$`,
  ),
  // asctime: `Sun Nov  6 08:49:37 1994`, the day padded with a space
  new RegExp(`^${DAY} ${MONTH} (?<day>[ \\d]\\d) ${TIME} (?<year>\\d{4})$`),
];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/**
 * `Retry-After` in milliseconds from `now`: delay-seconds, or an HTTP date (0 once it has passed); one second when
 * absent or unreadable.
 * @example
 * retryAfterMs('Sunday, 06-Nov-94 08:49:37 GMT', Date.parse('1994-11-06T08:49:07Z')) // 30000
 */
export function retryAfterMs(value: string | null, now: number): number {
  if (value === null) return FALLBACK_MS;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // Anything else Date.parse would read ('1.5', '-1', a local time) is not a date the service would send.
  const at = httpDate(text, now);
  return at === undefined ? FALLBACK_MS : Math.max(0, at - now);
}

/** The time of an HTTP date in any of its three forms, or undefined. */
function httpDate(text: string, now: number): number | undefined {
  const found = HTTP_DATES.map((form) => form.exec(text)?.groups).find((groups) => groups !== undefined);
  if (found === undefined) return undefined;
  const day = Number(found.day);
  const [h, m, s] = [Number(found.h), Number(found.m), Number(found.s)];
  const year =
    found.year === undefined
      ? fullYear(Number(found.yy), new Date(now).getUTCFullYear())
      : Number(found.year);
  const month = MONTHS.indexOf(found.month!);
  if (day < 1 || h > 23 || m > 59 || s > 60) return undefined;
  const at = Date.UTC(year, month, day, h, m, s);
  // 31 Feb rolls over into March in Date.UTC: such a day is not a date.
  return new Date(at).getUTCDate() === day ? at : undefined;
}

/**
 * RFC 9110: a two-digit year that would be more than 50 years in the future is the latest past year with those
 * digits; so the year is the one ending in `yy` within fifty years of `thisYear`.
 */
function fullYear(yy: number, thisYear: number): number {
  const past = thisYear - ((thisYear - yy) % 100);
  return past + 100 <= thisYear + 50 ? past + 100 : past;
}
