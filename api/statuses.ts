// The spec's number-or-name tables (leave status, attendance status, work mode, exception status and type).

// Each table is written once, `as const`, and its name and number types derive from it; the exported table is that
// literal frozen, annotated with its type because `isolatedDeclarations` cannot infer through `Object.freeze`.
const leaveStatuses = {
  Submitted: 0,
  Pending: 1,
  Approved: 2,
  Rejected: 3,
  Abandoned: 4,
  Expired: 5,
} as const;
/**
 * Leave status names by `leaveStatusId` (spec "Leave status").
 * @example
 * LEAVE_STATUSES.Approved // 2
 */
export const LEAVE_STATUSES: typeof leaveStatuses = Object.freeze(leaveStatuses);
export type LeaveStatusName = keyof typeof LEAVE_STATUSES;
export type LeaveStatusId = (typeof LEAVE_STATUSES)[LeaveStatusName];

const attendanceStatuses = {
  Present: 0,
  Late: 1,
  Absent: 2,
  Leave: 3,
  Holiday: 4,
  Excused: 5,
} as const;
/**
 * Attendance status names by number (spec "Attendance status").
 * @example
 * ATTENDANCE_STATUSES.Late // 1
 */
export const ATTENDANCE_STATUSES: typeof attendanceStatuses = Object.freeze(attendanceStatuses);
export type AttendanceStatusName = keyof typeof ATTENDANCE_STATUSES;
export type AttendanceStatusId = (typeof ATTENDANCE_STATUSES)[AttendanceStatusName];

const workModes = {
  Remote: 0,
  Onsite: 1,
  Hybrid: 2,
} as const;
/**
 * Work modes by number (the `WorkMode` filter of the attendance list).
 * @example
 * WORK_MODES.Hybrid // 2
 */
export const WORK_MODES: typeof workModes = Object.freeze(workModes);
export type WorkModeName = keyof typeof WORK_MODES;
export type WorkModeId = (typeof WORK_MODES)[WorkModeName];

const exceptionStatuses = {
  Pending: 1,
  Approved: 2,
  Rejected: 3,
  Cancelled: 4,
} as const;
/**
 * Attendance exception statuses by number (spec "Attendance exception status").
 * @example
 * EXCEPTION_STATUSES.Approved // 2
 */
export const EXCEPTION_STATUSES: typeof exceptionStatuses = Object.freeze(exceptionStatuses);
export type ExceptionStatusName = keyof typeof EXCEPTION_STATUSES;
export type ExceptionStatusId = (typeof EXCEPTION_STATUSES)[ExceptionStatusName];

const exceptionTypes = {
  ExcusedAbsence: 1,
  DayOffGranted: 2,
  RemoteDay: 3,
  CompanyClosure: 4,
} as const;
/**
 * Attendance exception types by number (the `Type` filter of the exceptions list).
 * @example
 * EXCEPTION_TYPES.RemoteDay // 3
 */
export const EXCEPTION_TYPES: typeof exceptionTypes = Object.freeze(exceptionTypes);
export type ExceptionTypeName = keyof typeof EXCEPTION_TYPES;
export type ExceptionTypeId = (typeof EXCEPTION_TYPES)[ExceptionTypeName];

/** Who a leave type covers: 0 organisation, 1 company, 2 department, 3 unit, 4 named employees. */
export type EligibilityCriteria = 0 | 1 | 2 | 3 | 4;

const weekdays = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'] as const;
/**
 * Weekday names, as `applicableDay` carries them.
 * @example
 * WEEKDAYS[1] // 'Monday'
 */
export const WEEKDAYS: typeof weekdays = Object.freeze(weekdays);

/** A weekday name, as `applicableDay` carries it. */
export type Weekday = (typeof WEEKDAYS)[number];

/**
 * The name of a table entry given its name or number (any case), or undefined when it is in neither column.
 * @example
 * statusName(LEAVE_STATUSES, '2') // 'Approved'
 */
export function statusName<N extends string>(
  table: Readonly<Record<N, number>>,
  value: string | number,
): N | undefined {
  const text = String(value).trim();
  for (const [name, number] of Object.entries(table) as [N, number][]) {
    if (name.toLowerCase() === text.toLowerCase() || String(number) === text) return name;
  }
  return undefined;
}
