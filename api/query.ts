// Checking parameters and sending them under the spec's exact query names (`PageNumber`, `LeaveStatus`...).
import { isCalendarDate } from './dates.js';
import { InvalidParameterError } from './errors.js';
import {
  ATTENDANCE_STATUSES,
  EXCEPTION_STATUSES,
  EXCEPTION_TYPES,
  LEAVE_STATUSES,
  statusName,
  WEEKDAYS,
  WORK_MODES,
} from './statuses.js';

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

type Kind =
  | 'uuid'
  | 'date'
  | 'string'
  | 'bool'
  | { readonly min: number; readonly max?: number }
  | { readonly table: Readonly<Record<string, number>> }
  | { readonly oneOf: readonly string[] };

/** One parameter: its camelCase key, the spec's query name, and what it may hold. */
export type Field = readonly [key: string, name: string, kind: Kind];

const page: readonly Field[] = [
  ['pageNumber', 'PageNumber', { min: 1 }],
  ['pageSize', 'PageSize', { min: 1 }],
];

/**
 * The fields of each endpoint, in the spec's order.
 * @example
 * buildQuery(FIELDS.exceptions, { pageSize: 100 })
 */
export const FIELDS: Readonly<
  Record<
    'leaveRequests' | 'leaveBalance' | 'leaveTypes' | 'attendance' | 'exceptions' | 'holidays',
    readonly Field[]
  >
> = {
  leaveRequests: [
    ...page,
    ['companyId', 'CompanyId', 'uuid'],
    ['departmentId', 'DepartmentId', 'uuid'],
    ['leaveTypeId', 'LeaveTypeId', 'uuid'],
    ['leaveStatus', 'LeaveStatus', { table: LEAVE_STATUSES }],
    ['startDate', 'StartDate', 'date'],
    ['endDate', 'EndDate', 'date'],
    ['searchTerm', 'SearchTerm', 'string'],
    ['orderBy', 'OrderBy', { min: 0, max: 1 }],
  ],
  leaveBalance: [
    ['employeeId', 'EmployeeId', 'uuid'],
    ['leaveTypeId', 'LeaveTypeId', 'uuid'],
  ],
  leaveTypes: [
    ...page,
    ['companyId', 'CompanyId', 'uuid'],
    ['searchTerm', 'SearchTerm', 'string'],
    ['isActive', 'IsActive', 'bool'],
    ['eligibilityCriteria', 'EligibilityCriteria', { min: 0, max: 4 }],
  ],
  attendance: [
    ...page,
    ['startDate', 'StartDate', 'date'],
    ['endDate', 'EndDate', 'date'],
    ['employeeId', 'EmployeeId', 'uuid'],
    ['companyId', 'CompanyId', 'uuid'],
    ['department', 'Department', 'uuid'],
    ['unit', 'Unit', 'uuid'],
    ['status', 'Status', { table: ATTENDANCE_STATUSES }],
    ['workMode', 'WorkMode', { table: WORK_MODES }],
    ['applicableDay', 'ApplicableDay', { oneOf: WEEKDAYS }],
    ['needsReview', 'NeedsReview', 'bool'],
    ['searchTerm', 'SearchTerm', 'string'],
  ],
  exceptions: [
    ['pageNumber', 'PageNumber', { min: 1 }],
    // Spec "Limits": at most 100 for the exceptions list.
    ['pageSize', 'PageSize', { min: 1, max: 100 }],
    ['from', 'From', 'date'],
    ['to', 'To', 'date'],
    ['employeeId', 'EmployeeId', 'uuid'],
    ['companyId', 'CompanyId', 'uuid'],
    ['departmentId', 'DepartmentId', 'uuid'],
    ['status', 'Status', { table: EXCEPTION_STATUSES }],
    ['type', 'Type', { table: EXCEPTION_TYPES }],
    ['batchId', 'BatchId', 'uuid'],
    ['search', 'Search', 'string'],
  ],
  holidays: [
    ['year', 'Year', { min: 1, max: 9999 }],
    ['companyId', 'CompanyId', 'uuid'],
  ],
};

/**
 * Checks `params` against the endpoint's fields and returns the query string under the spec's names; throws
 * `InvalidParameterError` before anything is sent. `together` names two parameters that go in pairs.
 * @example
 * buildQuery(FIELDS.leaveRequests, { pageSize: 50, leaveStatus: 'Approved' }) // 'PageSize=50&LeaveStatus=Approved'
 */
export function buildQuery(
  fields: readonly Field[],
  params: object | undefined,
  together?: readonly [string, string],
): string {
  const values = (params ?? {}) as Record<string, unknown>;
  const known = new Set(fields.map(([key]) => key));
  for (const key of Object.keys(values)) {
    if (!known.has(key) && values[key] !== undefined) {
      throw new InvalidParameterError(
        key,
        `not a parameter of this endpoint (expected one of ${[...known].join(', ')})`,
      );
    }
  }
  const query = new URLSearchParams();
  for (const [key, name, kind] of fields) {
    const value = values[key];
    if (value === undefined || value === null) continue;
    query.set(name, checkValue(name, kind, value));
  }
  if (together !== undefined && query.has(together[0]) !== query.has(together[1])) {
    const [first, second] = together;
    throw new InvalidParameterError(
      query.has(first) ? second : first,
      `${first} and ${second} must be sent together`,
    );
  }
  return query.toString();
}

function checkValue(name: string, kind: Kind, value: unknown): string {
  if (kind === 'uuid') return uuid(name, value);
  if (kind === 'date') {
    if (!isCalendarDate(value))
      throw new InvalidParameterError(name, `${show(value)} is not a date written YYYY-MM-DD`);
    return value;
  }
  if (kind === 'string') {
    if (typeof value !== 'string') throw new InvalidParameterError(name, `${show(value)} is not a string`);
    return value;
  }
  if (kind === 'bool') {
    if (typeof value !== 'boolean')
      throw new InvalidParameterError(name, `${show(value)} is not true or false`);
    return String(value);
  }
  if ('min' in kind) {
    // Safe integers only: a larger one is written `1e+21`, or rounded, and would not go out as the number given.
    if (
      typeof value !== 'number' ||
      !Number.isSafeInteger(value) ||
      value < kind.min ||
      value > (kind.max ?? Infinity)
    ) {
      const range = `from ${kind.min} to ${kind.max ?? Number.MAX_SAFE_INTEGER}`;
      throw new InvalidParameterError(name, `${show(value)} is not a whole number ${range}`);
    }
    return String(value);
  }
  if ('table' in kind) {
    // Exactly a name or a number of the spec's table: `approved` or `'2'` would reach the service as written,
    // and what it does with them is not shown.
    const entries = Object.entries(kind.table);
    const valid =
      (typeof value === 'string' && Object.hasOwn(kind.table, value)) ||
      (typeof value === 'number' && entries.some(([, number]) => number === value));
    if (!valid) {
      const choices = entries.map(([n, i]) => `${n} (${i})`).join(', ');
      const near = typeof value === 'string' ? statusName(kind.table, value) : undefined;
      const hint =
        near === undefined
          ? ''
          : `; names are case-sensitive and numbers are numbers: did you mean ${show(near)}?`;
      throw new InvalidParameterError(name, `${show(value)} is not one of ${choices}${hint}`);
    }
    return String(value);
  }
  if (typeof value !== 'string' || !kind.oneOf.includes(value)) {
    throw new InvalidParameterError(name, `${show(value)} is not one of ${kind.oneOf.join(', ')}`);
  }
  return value;
}

/**
 * Returns `value` when it is a uuid, else throws `InvalidParameterError` naming the parameter.
 * @example
 * uuid('id', leaveRequestId)
 */
export function uuid(name: string, value: unknown): string {
  if (typeof value !== 'string' || !UUID.test(value))
    throw new InvalidParameterError(name, `${show(value)} is not a uuid`);
  return value;
}

function show(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}
