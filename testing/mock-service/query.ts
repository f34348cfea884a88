// Reading the mock API's query parameters by the spec's names; anything malformed is a failed answer.
import { isCalendarDate } from '../../api/dates.js';
import { statusName } from '../../api/statuses.js';

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/**
 * A failed answer: HTTP status and the envelope's `code` and `message` (`isSuccessful: false`).
 * @example
 * throw new MockApiFailure(404, 'not_found', 'the leave request was not found in this organisation');
 */
export class MockApiFailure extends Error {
  readonly status: number;
  readonly code: string;

  constructor(status: number, code: string, message: string) {
    super(message);
    this.name = 'MockApiFailure';
    this.status = status;
    this.code = code;
  }
}

/** Typed access to a request's query parameters. */
export interface QueryReader {
  int(name: string, fallback: number, max?: number): number;
  optionalInt(name: string, min: number, max: number): number | undefined;
  uuid(name: string): string | undefined;
  date(name: string): string | undefined;
  bool(name: string): boolean | undefined;
  text(name: string): string | undefined;
  /** The table's name for a name-or-number parameter (`LeaveStatus=2` and `LeaveStatus=Approved` alike). */
  named<N extends string>(name: string, table: Readonly<Record<N, number>>): N | undefined;
}

const invalid = (name: string, why: string): MockApiFailure =>
  new MockApiFailure(400, 'invalid_parameter', `${name} ${why}`);

/**
 * Wraps `URLSearchParams`; parameter names are case-as-written (spec "Endpoints").
 * @example
 * readQuery(url.searchParams).int('PageSize', 25)
 */
export function readQuery(params: URLSearchParams): QueryReader {
  const get = (name: string): string | undefined => {
    const value = params.get(name);
    return value === null || value === '' ? undefined : value;
  };
  const optionalInt = (name: string, min: number, max: number): number | undefined => {
    const value = get(name);
    if (value === undefined) return undefined;
    const n = Number(value);
    if (!/^-?\d+$/.test(value) || n < min || n > max)
      throw invalid(name, `must be a whole number from ${min} to ${max}`);
    return n;
  };
  return {
    // The spec shows no maximum PageSize but the exceptions list's 100 ("Limits"): the mock's 10 000 is its own bound,
    // refused with invalid_parameter, so a call asking for everything at once is seen here and not by the service.
    int: (name, fallback, max = 10_000) => optionalInt(name, 1, max) ?? fallback,
    optionalInt,
    uuid(name) {
      const value = get(name);
      if (value !== undefined && !UUID.test(value)) throw invalid(name, 'must be a uuid');
      return value?.toLowerCase();
    },
    date(name) {
      const value = get(name);
      if (value !== undefined && !isCalendarDate(value))
        throw invalid(name, 'must be a date written YYYY-MM-DD');
      return value;
    },
    bool(name) {
      const value = get(name)?.toLowerCase();
      if (value === undefined) return undefined;
      if (value !== 'true' && value !== 'false') throw invalid(name, 'must be true or false');
      return value === 'true';
    },
    text: (name) => get(name),
    named(name, table) {
      const value = get(name);
      if (value === undefined) return undefined;
      const found = statusName(table, value);
      if (found === undefined)
        throw invalid(name, `must be one of ${Object.keys(table).join(', ')} or their numbers`);
      return found;
    },
  };
}

/**
 * One page of `rows` in the spec's paged shape.
 * @example
 * paginate(rows, query, 25)
 */
export function paginate<T>(
  rows: readonly T[],
  query: QueryReader,
  defaultSize: number,
  maxSize?: number,
): object {
  // The spec bounds no page number: one past the last is an empty page, however far past.
  const pageNumber = query.int('PageNumber', 1, Number.MAX_SAFE_INTEGER);
  const pageSize = query.int('PageSize', defaultSize, maxSize);
  return {
    data: rows.slice((pageNumber - 1) * pageSize, pageNumber * pageSize),
    pageNumber,
    pageSize,
    totalRecords: rows.length,
    totalPages: Math.ceil(rows.length / pageSize),
  };
}

/**
 * Case-insensitive "contains" for the search parameters.
 * @example
 * matches('oka', 'Ada Okafor') // true
 */
export function matches(term: string | undefined, ...fields: string[]): boolean {
  return term === undefined || fields.some((f) => f.toLowerCase().includes(term.toLowerCase()));
}
