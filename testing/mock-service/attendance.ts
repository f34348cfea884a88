// Attendance by the spec's rules: the status of an employee's day, clock-ins, and the absence report.
import { ATTENDANCE_STATUSES } from '../../api/statuses.js';
import { eachDay } from './calendar.js';
import { approvedException, isHoliday, isRestDay, isWorkingDay, mockId, onLeave } from './rules.js';
import type { AttendanceRow, EmployeeRow, MockState, ReportRow } from './state.js';

/** The policy's late cut-off: a clock-in after it is Late (the spec does not show the policy's value). */
const LATE_CUT_OFF = '09:00:00';

/** What the rules make of an employee's day. */
interface DayStatus {
  readonly status: number;
  readonly exceptionId?: string;
  readonly needsReview: boolean;
}

/**
 * The status of an employee's day from the facts: an approved exception first (spec: "an excused employee is
 * never Absent or Late"), then the clock-in (Present or Late), then holiday, approved leave, and Absent.
 * @example
 * dayStatus(state, employee, '2026-06-15', '09:20:00').status // 1 (Late) unless an exception excuses the day
 */
function dayStatus(state: MockState, employee: EmployeeRow, date: string, clockInTime?: string): DayStatus {
  const excused = approvedException(state, employee.id, date);
  if (excused !== undefined) {
    // A half-day exception excuses the day too: the clock-in in the other half is the work still owed, so it
    // is neither Late (the cut-off belongs to a full day) nor a case for review. Only a clock-in on a fully
    // excused day needs review (spec `needsReview`).
    return {
      status: ATTENDANCE_STATUSES.Excused,
      exceptionId: excused.id,
      needsReview: clockInTime !== undefined && excused.halfDay === undefined,
    };
  }
  if (clockInTime !== undefined) {
    return {
      status: clockInTime > LATE_CUT_OFF ? ATTENDANCE_STATUSES.Late : ATTENDANCE_STATUSES.Present,
      needsReview: false,
    };
  }
  const status = isHoliday(state, employee, date)
    ? ATTENDANCE_STATUSES.Holiday
    : onLeave(state, employee.id, date)
      ? ATTENDANCE_STATUSES.Leave
      : ATTENDANCE_STATUSES.Absent;
  return { status, needsReview: false };
}

function nextId(state: MockState): string {
  const taken = new Set(state.attendance.map((a) => a.id));
  let n = state.attendance.length + 1;
  while (taken.has(mockId(0x0a77, n))) n++;
  return mockId(0x0a77, n);
}

function settle(row: AttendanceRow, day: DayStatus): void {
  row.status = day.status;
  row.needsReview = day.needsReview;
  if (day.exceptionId === undefined) delete row.exceptionId;
  else row.exceptionId = day.exceptionId;
}

/**
 * An employee clocks in (spec "Attendance status" transitions): a record is written, its status by `dayStatus`.
 * @example
 * clockIn(state, employee, '2026-06-15', '09:20:00') // a Late record, or Excused on an excused day
 */
export function clockIn(
  state: MockState,
  employee: EmployeeRow,
  date: string,
  time: string,
  clockOut?: string,
): AttendanceRow {
  // Spec "Attendance record": one record per employee per day.
  if (state.attendance.some((a) => a.employeeId === employee.id && a.date === date)) {
    throw new Error(`workforce-webhooks mock: ${employee.firstName} already has a record on ${date}`);
  }
  const row: AttendanceRow = {
    id: nextId(state),
    employeeId: employee.id,
    date,
    clockInTime: time,
    ...(clockOut !== undefined && employee.trackingMethod === 'ClockInClockOut'
      ? { clockOutTime: clockOut }
      : {}),
    workMode: employee.workMode,
    location: employee.workMode === 'Remote' ? 'Home' : 'Head office',
    ...dayStatus(state, employee, date, time),
  };
  state.attendance.push(row);
  return row;
}

/**
 * Makes one employee's record of a reported day agree with the facts: written when missing, its status,
 * exception and review flag updated; none on the employee's rest day unless they clocked in.
 * @example
 * recordDay(state, employee, '2026-06-12');
 */
function recordDay(state: MockState, employee: EmployeeRow, date: string): void {
  const index = state.attendance.findIndex((a) => a.employeeId === employee.id && a.date === date);
  const row = state.attendance[index];
  const day = dayStatus(state, employee, date, row?.clockInTime);
  // Nobody is expected on a rest day (weekend or own day off): without a clock-in it has no record at all, so
  // it is never Absent, and leave, holidays and exceptions have nothing to excuse.
  if (row?.clockInTime === undefined && isRestDay(employee, date)) {
    if (index !== -1) state.attendance.splice(index, 1);
    return;
  }
  if (row !== undefined) settle(row, day);
  else
    state.attendance.push({
      id: nextId(state),
      employeeId: employee.id,
      date,
      workMode: employee.workMode,
      ...day,
    });
}

/**
 * After leave or an exception changed, brings the employee's records over `start`..`end` back into agreement:
 * days whose report has run get `recordDay` and their report's counts again (spec: the counts are "employees
 * with each status"); other days only update the clock-ins they already have.
 * @example
 * refreshRecords(state, exception.employeeId, exception.startDate, exception.endDate);
 */
export function refreshRecords(state: MockState, employeeId: string, start: string, end: string): void {
  const employee = state.employees.find((e) => e.id === employeeId);
  if (employee === undefined) return;
  const employees = state.employees.filter((e) => e.organizationId === employee.organizationId);
  for (const date of eachDay(start, end)) {
    const report = state.reports.findIndex(
      (r) => r.organizationId === employee.organizationId && r.reportDate === date,
    );
    const row = state.attendance.find((a) => a.employeeId === employeeId && a.date === date);
    if (report !== -1) {
      recordDay(state, employee, date);
      state.reports[report] = { ...state.reports[report]!, ...dayCounts(state, employees, date) };
    } else if (row !== undefined) settle(row, dayStatus(state, employee, date, row.clockInTime));
  }
}

type Counts = Pick<
  ReportRow,
  | 'presentCount'
  | 'lateCount'
  | 'absentCount'
  | 'leaveCount'
  | 'holidayCount'
  | 'excusedCount'
  | 'excusedAbsenceCount'
  | 'unexcusedAbsenceCount'
>;

function dayCounts(state: MockState, employees: readonly EmployeeRow[], date: string): Counts {
  const day = state.attendance.filter((a) => a.date === date && employees.some((e) => e.id === a.employeeId));
  const count = (status: number): number => day.filter((a) => a.status === status).length;
  const { Present, Late, Absent, Leave, Holiday, Excused } = ATTENDANCE_STATUSES;
  const [leave, holiday, excused] = [count(Leave), count(Holiday), count(Excused)];
  return {
    presentCount: count(Present),
    lateCount: count(Late),
    absentCount: count(Absent),
    leaveCount: leave,
    holidayCount: holiday,
    excusedCount: excused,
    excusedAbsenceCount: leave + holiday + excused,
    unexcusedAbsenceCount: count(Absent),
  };
}

/**
 * HR runs the absence report for a day: every employee gets the record the facts give (Absent, Leave, Holiday
 * or Excused without a clock-in), and the report's counts are those records'.
 * @example
 * runAbsenceReport(state, organizationId, '2026-06-15', new Date().toISOString()).reportId
 */
export function runAbsenceReport(
  state: MockState,
  organizationId: string,
  date: string,
  completedAt: string,
): ReportRow {
  const employees = state.employees.filter((e) => e.organizationId === organizationId);
  for (const employee of employees) recordDay(state, employee, date);
  const report: ReportRow = {
    organizationId,
    reportId: mockId(0x0e90, state.reports.length + 1),
    reportDate: date,
    status: 'Completed',
    // Not a working day when nobody was expected: a weekend, or a holiday (or day off) for everyone.
    isWorkDay: employees.some((e) => isWorkingDay(state, e, date)),
    completedAt,
    totalEmployeesProcessed: employees.length,
    ...dayCounts(state, employees, date),
  };
  state.reports.push(report);
  return report;
}
