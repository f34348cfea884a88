// The spec's number-or-name tables (leave status, attendance status, work mode, exception status and type).

/**
 * Leave status names by `leaveStatusId` (spec "Leave status").
 * @example
 * LEAVE_STATUSES.Approved // 2
 */
export const LEAVE_STATUSES: Readonly<Record<LeaveStatusName, LeaveStatusId>> = Object.freeze({
  Submitted: 0,
  Pending: 1,
  Approved: 2,
  Rejected: 3,
  Abandoned: 4,
  Expired: 5,
});
export type LeaveStatusName = 'Submitted' | 'Pending' | 'Approved' | 'Rejected' | 'Abandoned' | 'Expired';
export type LeaveStatusId = 0 | 1 | 2 | 3 | 4 | 5;

/**
 * Attendance status names by number (spec "Attendance status").
 * @example
 * ATTENDANCE_STATUSES.Late // 1
 */
export const ATTENDANCE_STATUSES: Readonly<Record<AttendanceStatusName, AttendanceStatusId>> = Object.freeze({
  Present: 0,
  Late: 1,
  Absent: 2,
  Leave: 3,
  Holiday: 4,
  Excused: 5,
});
export type AttendanceStatusName = 'Present' | 'Late' | 'Absent' | 'Leave' | 'Holiday' | 'Excused';
export type AttendanceStatusId = 0 | 1 | 2 | 3 | 4 | 5;

/**
 * Work modes by number (the `WorkMode` filter of the attendance list).
 * @example
 * WORK_MODES.Hybrid // 2
 */
export const WORK_MODES: Readonly<Record<WorkModeName, WorkModeId>> = Object.freeze({
  Remote: 0,
  Onsite: 1,
  Hybrid: 2,
});
export type WorkModeName = 'Remote' | 'Onsite' | 'Hybrid';
export type WorkModeId = 0 | 1 | 2;

/**
 * Attendance exception statuses by number (spec "Attendance exception status").
 * @example
 * EXCEPTION_STATUSES.Approved // 2
 */
export const EXCEPTION_STATUSES: Readonly<Record<ExceptionStatusName, ExceptionStatusId>> = Object.freeze({
  Pending: 1,
  Approved: 2,
  Rejected: 3,
  Cancelled: 4,
});
export type ExceptionStatusName = 'Pending' | 'Approved' | 'Rejected' | 'Cancelled';
export type ExceptionStatusId = 1 | 2 | 3 | 4;

/**
 * Attendance exception types by number (the `Type` filter of the exceptions list).
 * @example
 * EXCEPTION_TYPES.RemoteDay // 3
 */
export const EXCEPTION_TYPES: Readonly<Record<ExceptionTypeName, ExceptionTypeId>> = Object.freeze({
  ExcusedAbsence: 1,
  DayOffGranted: 2,
  RemoteDay: 3,
  CompanyClosure: 4,
});
export type ExceptionTypeName = 'ExcusedAbsence' | 'DayOffGranted' | 'RemoteDay' | 'CompanyClosure';
export type ExceptionTypeId = 1 | 2 | 3 | 4;

/** Who a leave type covers: 0 organisation, 1 company, 2 department, 3 unit, 4 named employees. */
export type EligibilityCriteria = 0 | 1 | 2 | 3 | 4;

/** A weekday name, as `applicableDay` carries it. */
export type Weekday = 'Sunday' | 'Monday' | 'Tuesday' | 'Wednesday' | 'Thursday' | 'Friday' | 'Saturday';

/**
 * Weekday names, as `applicableDay` carries them.
 * @example
 * WEEKDAYS[1] // 'Monday'
 */
export const WEEKDAYS: readonly Weekday[] = Object.freeze([
  'Sunday',
  'Monday',
  'Tuesday',
  'Wednesday',
  'Thursday',
  'Friday',
  'Saturday',
]);

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
