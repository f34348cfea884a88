// The service's rules the mock applies: holidays, working days, balances, clock-ins and the absence report.
import type { LeaveBalance } from '../../api/records.js';
import { ATTENDANCE_STATUSES, LEAVE_STATUSES } from '../../api/statuses.js';
import { addDays, eachDay, isWeekend } from './calendar.js';
import type { EmployeeRow, ExceptionRow, MockState, ReportRow } from './state.js';

const LATE_CUT_OFF = '09:00:00';

/**
 * Ids the mock hands out, deterministic per kind and number so fixtures are the same on every run.
 * @example
 * mockId(0, 1) // '00000000-0000-4000-8000-000000000001'
 */
export function mockId(kind: number, n: number): string {
  return `${kind.toString(16).padStart(8, '0')}-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
}

/**
 * The country ids of a company and its offices.
 * @example
 * companyCountries(state, companyId) // [1, 2]
 */
export function companyCountries(state: MockState, companyId: string): number[] {
  const company = state.companies.find((c) => c.id === companyId);
  return company === undefined ? [] : [company.countryId, ...company.officeCountryIds];
}

/**
 * True when `date` is a public holiday in the employee's company country or a company holiday that covers them.
 * @example
 * isHoliday(state, employee, '2026-12-25')
 */
export function isHoliday(state: MockState, employee: EmployeeRow, date: string): boolean {
  const company = state.companies.find((c) => c.id === employee.companyId);
  const publicDay = state.publicHolidays.some((h) => {
    if (h.countryId !== company?.countryId) return false;
    const start = `${date.slice(0, 4)}-${h.monthDay}`;
    return date >= start && date <= addDays(start, h.days - 1);
  });
  const companyDay = state.holidays.some(
    (h) =>
      h.organizationId === employee.organizationId &&
      (h.companyId === undefined || h.companyId === employee.companyId) &&
      (h.isRecurring ? h.date.slice(5) === date.slice(5) && h.date <= date : h.date === date),
  );
  return publicDay || companyDay;
}

/**
 * Working days in a range: weekends and holidays are not counted (spec "Leave request" `days`).
 * @example
 * workingDays(state, employee, '2026-03-02', '2026-03-08') // 5
 */
export function workingDays(state: MockState, employee: EmployeeRow, start: string, end: string): number {
  return eachDay(start, end).filter((d) => !isWeekend(d) && !isHoliday(state, employee, d)).length;
}

/**
 * The approved exception covering `date` for this employee, if any.
 * @example
 * approvedException(state, employee.id, '2026-06-12')?.type
 */
export function approvedException(
  state: MockState,
  employeeId: string,
  date: string,
): ExceptionRow | undefined {
  return state.exceptions.find(
    (e) => e.employeeId === employeeId && e.status === 'Approved' && e.startDate <= date && e.endDate >= date,
  );
}

/**
 * This year's balance (spec "Leave balance", rule 1 for a pair never set up).
 * @example
 * leaveBalance(state, employee, leaveTypeId, '2026').daysRemaining
 */
export function leaveBalance(
  state: MockState,
  employee: EmployeeRow,
  leaveTypeId: string,
  year: string,
): LeaveBalance {
  const type = state.leaveTypes.find((t) => t.id === leaveTypeId)!;
  const setUp = state.balances.find((b) => b.employeeId === employee.id && b.leaveTypeId === leaveTypeId);
  if (setUp === undefined) {
    return {
      totalDays: type.maxLeaveDays,
      daysTaken: 0,
      daysRemaining: type.maxLeaveDays,
      leavePending: 0,
      leaveRejected: 0,
    };
  }
  const sum = (statuses: number[]): number =>
    state.leaveRequests
      .filter(
        (r) => r.employeeId === employee.id && r.leaveTypeId === leaveTypeId && r.startDate.startsWith(year),
      )
      .filter((r) => statuses.includes(r.statusId))
      .reduce((days, r) => days + workingDays(state, employee, r.startDate, r.endDate), 0);
  const daysTaken = sum([LEAVE_STATUSES.Approved]);
  return {
    totalDays: setUp.totalDays,
    daysTaken,
    daysRemaining: setUp.totalDays - daysTaken,
    leavePending: sum([LEAVE_STATUSES.Submitted, LEAVE_STATUSES.Pending]),
    leaveRejected: sum([LEAVE_STATUSES.Rejected]),
  };
}

/**
 * An employee clocks in (spec "Attendance status" transitions): Present on time, Late after the cut-off.
 * @example
 * clockIn(state, employee, '2026-06-15', '09:20:00') // a Late record
 */
export function clockIn(
  state: MockState,
  employee: EmployeeRow,
  date: string,
  time: string,
  clockOut?: string,
): void {
  const excused = approvedException(state, employee.id, date);
  state.attendance.push({
    id: mockId(0x0a77, state.attendance.length + 1),
    employeeId: employee.id,
    date,
    status: time > LATE_CUT_OFF ? ATTENDANCE_STATUSES.Late : ATTENDANCE_STATUSES.Present,
    clockInTime: time,
    ...(clockOut !== undefined && employee.trackingMethod === 'ClockInClockOut'
      ? { clockOutTime: clockOut }
      : {}),
    workMode: employee.workMode,
    location: employee.workMode === 'Remote' ? 'Home' : 'Head office',
    ...(excused !== undefined ? { exceptionId: excused.id } : {}),
    // Spec: needsReview is true when the employee clocked in on a fully excused day.
    needsReview: excused !== undefined && excused.halfDay === undefined,
  });
}

/**
 * HR runs the absence report for a day: every expected employee without a record gets Absent, Leave, Holiday
 * or Excused, and the report's counts are final.
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
  for (const employee of employees) {
    if (state.attendance.some((a) => a.employeeId === employee.id && a.date === date)) continue;
    const onLeave = state.leaveRequests.some(
      (r) =>
        r.employeeId === employee.id &&
        r.statusId === LEAVE_STATUSES.Approved &&
        r.startDate <= date &&
        r.endDate >= date,
    );
    const excused = approvedException(state, employee.id, date);
    const status = isHoliday(state, employee, date)
      ? ATTENDANCE_STATUSES.Holiday
      : onLeave
        ? ATTENDANCE_STATUSES.Leave
        : excused !== undefined
          ? ATTENDANCE_STATUSES.Excused
          : ATTENDANCE_STATUSES.Absent;
    if (isWeekend(date) && status === ATTENDANCE_STATUSES.Absent) continue;
    state.attendance.push({
      id: mockId(0x0a77, state.attendance.length + 1),
      employeeId: employee.id,
      date,
      status,
      workMode: employee.workMode,
      ...(excused !== undefined && status === ATTENDANCE_STATUSES.Excused ? { exceptionId: excused.id } : {}),
      needsReview: false,
    });
  }
  const day = state.attendance.filter((a) => a.date === date && employees.some((e) => e.id === a.employeeId));
  const count = (status: number): number => day.filter((a) => a.status === status).length;
  const [present, late, absent, leave, holiday, excused] = [0, 1, 2, 3, 4, 5].map(count) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const report: ReportRow = {
    organizationId,
    reportId: mockId(0x0e90, state.reports.length + 1),
    reportDate: date,
    status: 'Completed',
    isWorkDay: !isWeekend(date),
    completedAt,
    totalEmployeesProcessed: employees.length,
    presentCount: present,
    lateCount: late,
    absentCount: absent,
    leaveCount: leave,
    holidayCount: holiday,
    excusedCount: excused,
    excusedAbsenceCount: leave + holiday + excused,
    unexcusedAbsenceCount: absent,
  };
  state.reports.push(report);
  return report;
}
