// Rows to API records, field for field as the spec's tables list them.
import type {
  AttendanceException,
  AttendanceRecord,
  CompanyHoliday,
  LeaveRequest,
  LeaveRequestDetails,
  PublicHoliday,
} from '../../api/records.js';
import {
  ATTENDANCE_STATUSES,
  LEAVE_STATUSES,
  type LeaveStatusId,
  type LeaveStatusName,
  statusName,
} from '../../api/statuses.js';
import { leaveDate, weekday } from './calendar.js';
import { companyCountries, holidayDay, publicHolidaySpan, workingDays } from './rules.js';
import type {
  AttendanceRow,
  EmployeeRow,
  ExceptionRow,
  HolidayRow,
  LeaveRequestRow,
  MockState,
} from './state.js';

const fullName = (e: EmployeeRow): string => `${e.firstName} ${e.lastName}`;

/**
 * The employee of a row (the fixtures never leave one dangling).
 * @example
 * employeeOf(state, row.employeeId).companyId
 */
export function employeeOf(state: MockState, id: string): EmployeeRow {
  return state.employees.find((e) => e.id === id)!;
}

/**
 * A leave request list item; dates written `YYYY-MM-DDT00:00:00` like the service.
 * @example
 * renderLeaveRequest(state, state.leaveRequests[0]!).startDate // '2026-01-05T00:00:00'
 */
export function renderLeaveRequest(state: MockState, row: LeaveRequestRow): LeaveRequest {
  const employee = employeeOf(state, row.employeeId);
  return {
    id: row.id,
    employeeId: row.employeeId,
    employeeName: fullName(employee),
    leaveTypeName: state.leaveTypes.find((t) => t.id === row.leaveTypeId)!.name,
    startDate: leaveDate(row.startDate),
    endDate: leaveDate(row.endDate),
    days: workingDays(state, employee, row.startDate, row.endDate),
    leaveStatusId: row.statusId as LeaveStatusId,
    leaveStatus: statusName(LEAVE_STATUSES, row.statusId) as LeaveStatusName,
    comments: row.comments,
    requestedOn: row.requestedOn,
  };
}

/**
 * A leave request with the details endpoint's extra fields.
 * @example
 * renderLeaveDetails(state, row).relievers
 */
export function renderLeaveDetails(state: MockState, row: LeaveRequestRow): LeaveRequestDetails {
  const employee = employeeOf(state, row.employeeId);
  return {
    ...renderLeaveRequest(state, row),
    firstName: employee.firstName,
    lastName: employee.lastName,
    workMode: employee.workMode,
    jobRoles: [employee.jobRole],
    department: [state.departments.find((d) => d.id === employee.departmentId)!.name],
    documents: row.documents,
    relievers: row.relieverIds.map((id) => {
      const reliever = employeeOf(state, id);
      return { id, fullName: fullName(reliever), email: reliever.email };
    }),
    handoffNote: row.handoffNote,
  };
}

/**
 * An attendance record; optional fields are left out when there is nothing to say.
 * @example
 * renderAttendance(state, state.attendance[0]!).applicableDay
 */
export function renderAttendance(state: MockState, row: AttendanceRow): AttendanceRecord {
  const employee = employeeOf(state, row.employeeId);
  const company = state.companies.find((c) => c.id === employee.companyId)!;
  const exception = state.exceptions.find((e) => e.id === row.exceptionId);
  const hours =
    row.clockInTime !== undefined && row.clockOutTime !== undefined
      ? (seconds(row.clockOutTime) - seconds(row.clockInTime)) / 3600
      : 0;
  return {
    id: row.id,
    employeeId: employee.id,
    firstName: employee.firstName,
    lastName: employee.lastName,
    email: employee.email,
    department: state.departments.find((d) => d.id === employee.departmentId)!.name,
    role: employee.jobRole,
    company: { id: company.id, name: company.name },
    attendanceDate: row.date,
    applicableDay: weekday(row.date),
    trackingMethod: employee.trackingMethod,
    ...(row.clockInTime !== undefined ? { clockInTime: row.clockInTime } : {}),
    ...(row.clockOutTime !== undefined ? { clockOutTime: row.clockOutTime } : {}),
    status: statusName(ATTENDANCE_STATUSES, row.status)!,
    totalWorkedHours: Math.round(hours * 100) / 100,
    workmode: row.workMode,
    ...(row.location !== undefined ? { location: row.location } : {}),
    ...(exception !== undefined
      ? {
          attendanceExceptionId: exception.id,
          excuseType: exception.type,
          ...(exception.halfDay !== undefined ? { excusedHalfDay: exception.halfDay } : {}),
        }
      : {}),
    needsReview: row.needsReview,
  };
}

function seconds(time: string): number {
  const [h, m, s] = time.split(':').map(Number) as [number, number, number];
  return h * 3600 + m * 60 + s;
}

/**
 * An attendance exception as an API key sees it: reason, remarks, attachment and history withheld.
 * @example
 * renderException(state, row).canCancel // false
 */
export function renderException(state: MockState, row: ExceptionRow): AttendanceException {
  const employee = employeeOf(state, row.employeeId);
  const { employeeId, ...rest } = row;
  const days = Math.round((Date.parse(row.endDate) - Date.parse(row.startDate)) / 86_400_000) + 1;
  return {
    ...rest,
    employeeId,
    employeeName: fullName(employee),
    companyId: employee.companyId,
    days,
    canCancel: false,
  };
}

/**
 * A company holiday as listed for `year`, or undefined when it does not fall in that year.
 * @example
 * renderHoliday(state, row, 2030)?.occursOn
 */
export function renderHoliday(state: MockState, row: HolidayRow, year: number): CompanyHoliday | undefined {
  const occursOn = holidayDay(row, year);
  if (occursOn === undefined) return undefined;
  const company = state.companies.find((c) => c.id === row.companyId);
  return {
    id: row.id,
    name: row.name,
    date: row.date,
    occursOn,
    isRecurring: row.isRecurring,
    ...(company !== undefined ? { companyId: company.id, companyName: company.name } : {}),
  };
}

/**
 * Public holidays of `year` in the given countries, in date order.
 * @example
 * renderPublicHolidays(state, [1, 2], 2026)
 */
export function renderPublicHolidays(
  state: MockState,
  countryIds: readonly number[],
  year: number,
): PublicHoliday[] {
  return state.publicHolidays
    .filter((h) => countryIds.includes(h.countryId))
    .map((h) => ({
      name: h.name,
      ...publicHolidaySpan(h, year),
      countryId: h.countryId,
      countryName: state.countries[h.countryId]!,
    }))
    .sort((a, b) => a.startDate.localeCompare(b.startDate) || a.countryId - b.countryId);
}

/**
 * The countries of an organisation: its own, its companies' and their offices'.
 * @example
 * organizationCountries(state, organizationId) // [1, 2, 3]
 */
export function organizationCountries(state: MockState, organizationId: string): number[] {
  const own = state.organizations.find((o) => o.id === organizationId)!.countryId;
  const companies = state.companies
    .filter((c) => c.organizationId === organizationId)
    .flatMap((c) => companyCountries(state, c.id));
  return [...new Set([own, ...companies])];
}
