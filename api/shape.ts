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

/** A short description of a value: never a stringified object, which could be megabytes or too deep to print. */
function show(value: unknown): string {
  if (value === undefined) return 'missing';
  if (typeof value === 'string')
    return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}...` : value);
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (typeof value === 'object' && value !== null) return 'an object';
  return String(value);
}

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
 * `record[key]` as a whole number, from `min` to `max` when given.
 * @example
 * integer(page, 'pageNumber', 'data')
 */
export function integer(
  record: Record<string, unknown>,
  key: string,
  field: string,
  { min = Number.NEGATIVE_INFINITY, max = Number.POSITIVE_INFINITY }: { min?: number; max?: number } = {},
): number {
  const value = record[key];
  if (typeof value !== 'number' || !Number.isInteger(value))
    throw new ShapeError(`${field}.${key}`, `is ${show(value)}, not a whole number`);
  if (value < min || value > max)
    throw new ShapeError(`${field}.${key}`, `is ${value}, not ${min} to ${max}`);
  return value;
}

/**
 * `record[key]` as a string.
 * @example
 * string(row, 'name', 'data.data[0]')
 */
export function string(record: Record<string, unknown>, key: string, field: string): string {
  const value = record[key];
  if (typeof value !== 'string') throw new ShapeError(`${field}.${key}`, `is ${show(value)}, not a string`);
  return value;
}

/**
 * `record[key]` as a boolean.
 * @example
 * boolean(row, 'isActive', 'data.data[0]')
 */
export function boolean(record: Record<string, unknown>, key: string, field: string): boolean {
  const value = record[key];
  if (typeof value !== 'boolean')
    throw new ShapeError(`${field}.${key}`, `is ${show(value)}, not true or false`);
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
