// Reading the envelope's `data`: a field of an unexpected shape names itself, so the call can say where.
import { type CalendarDate, calendarDateOf } from './dates.js';

/**
 * A part of an answer that is not what the spec describes; the transport turns it into `ApiError`
 * `invalid_response` with the endpoint.
 * @example
 * throw new ShapeError('data.pageNumber', 'is "one", not a whole number');
 */
export class ShapeError extends Error {
  /** Where in the answer, from the envelope down: `data`, `data.data[3].startDate`. */
  readonly field: string;

  constructor(field: string, problem: string) {
    super(`${field} ${problem}`);
    this.name = 'ShapeError';
    this.field = field;
  }
}

/** A field path and the value found there. */
export type Read<T> = (value: unknown, field: string) => T;

const show = (value: unknown): string =>
  value === undefined ? 'missing' : `${JSON.stringify(value)?.slice(0, 60) ?? String(value)}`;

/**
 * `value` as an object, or a `ShapeError` naming `field`.
 * @example
 * const page = object(data, 'data');
 */
export function object(value: unknown, field: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ShapeError(field, `is ${show(value)}, not an object`);
  return value as Record<string, unknown>;
}

/**
 * `value` as an array with each item read by `item` at `field[i]`.
 * @example
 * list(data, 'data', readHoliday)
 */
export function list<T>(value: unknown, field: string, item: Read<T>): T[] {
  if (!Array.isArray(value)) throw new ShapeError(field, `is ${show(value)}, not an array`);
  return value.map((v, i) => item(v, `${field}[${i}]`));
}

/**
 * `record[key]` as a whole number.
 * @example
 * integer(page, 'pageNumber', 'data')
 */
export function integer(record: Record<string, unknown>, key: string, field: string): number {
  const value = record[key];
  if (typeof value !== 'number' || !Number.isInteger(value))
    throw new ShapeError(`${field}.${key}`, `is ${show(value)}, not a whole number`);
  return value;
}

/**
 * `record[key]` as a calendar date, from `YYYY-MM-DD` or the leave resources' `YYYY-MM-DDT00:00:00`.
 * @example
 * date(row, 'startDate', 'data.data[0]') // '2026-03-02'
 */
export function date(record: Record<string, unknown>, key: string, field: string): CalendarDate {
  const value = record[key];
  const day = calendarDateOf(value);
  if (day === undefined)
    throw new ShapeError(`${field}.${key}`, `is ${show(value)}, not a calendar date (YYYY-MM-DD)`);
  return day;
}

/**
 * `record` with each named key read as a calendar date; the other fields as they came.
 * @example
 * withDates(data, 'data', ['reportDate'])
 */
export function withDates<T>(value: unknown, field: string, keys: readonly string[]): T {
  const record = object(value, field);
  const out: Record<string, unknown> = { ...record };
  for (const key of keys) out[key] = date(record, key, field);
  return out as T;
}
