// The mock service's data model: an organisation's people, leave and attendance, as plain mutable rows.
import type { AbsenceReport, LeaveDocument, LeaveType } from '../../api/records.js';
import type { ExceptionStatusName, ExceptionTypeName, WorkModeName } from '../../api/statuses.js';

/** A permission of the spec's "Authentication" section. */
export type Permission =
  | 'Leave: View'
  | 'Attendance: View'
  | 'Employee Management: View'
  | 'Payroll: View'
  | 'View Attendance Exceptions';

/** An API key: one organisation, a set of permissions. */
export interface ApiKeyRow {
  readonly key: string;
  readonly organizationId: string;
  readonly permissions: readonly Permission[];
}

export interface OrganizationRow {
  readonly id: string;
  readonly name: string;
  readonly countryId: number;
}

export interface CompanyRow {
  readonly id: string;
  readonly organizationId: string;
  readonly name: string;
  readonly countryId: number;
  readonly officeCountryIds: readonly number[];
}

export interface DepartmentRow {
  readonly id: string;
  readonly companyId: string;
  readonly name: string;
  readonly units: readonly { readonly id: string; readonly name: string }[];
}

export interface EmployeeRow {
  readonly id: string;
  readonly organizationId: string;
  readonly companyId: string;
  readonly departmentId: string;
  readonly unitId?: string;
  readonly firstName: string;
  readonly lastName: string;
  readonly email: string;
  readonly jobRole: string;
  readonly workMode: WorkModeName;
  readonly trackingMethod: 'ClockInClockOut' | 'AttendanceOnly';
  /** Weekday names the employee does not work besides the weekend (a part-time pattern), e.g. `['Friday']`. */
  readonly daysOff?: readonly string[];
}

/** A leave type with the organisation (and, for company-scoped types, the company) it belongs to. */
export interface LeaveTypeRow extends LeaveType {
  readonly organizationId: string;
  readonly companyId?: string;
}

export interface LeaveRequestRow {
  readonly id: string;
  readonly employeeId: string;
  readonly leaveTypeId: string;
  /** `YYYY-MM-DD`; rendered as `YYYY-MM-DDT00:00:00` like the service. */
  readonly startDate: string;
  readonly endDate: string;
  statusId: number;
  readonly comments: string;
  readonly requestedOn: string;
  readonly documents: readonly LeaveDocument[];
  readonly relieverIds: readonly string[];
  readonly handoffNote: string;
}

/** A balance someone set up; a pair without one gets the type's full allowance (spec balance rule 1). */
export interface BalanceRow {
  readonly employeeId: string;
  readonly leaveTypeId: string;
  readonly totalDays: number;
}

/** One employee's day: the clock-in facts, and what the rules make of them (kept current by the triggers). */
export interface AttendanceRow {
  readonly id: string;
  readonly employeeId: string;
  readonly date: string;
  status: number;
  readonly clockInTime?: string;
  readonly clockOutTime?: string;
  readonly workMode: WorkModeName;
  readonly location?: string;
  exceptionId?: string;
  needsReview: boolean;
}

export interface ExceptionRow {
  readonly id: string;
  readonly employeeId: string;
  readonly startDate: string;
  readonly endDate: string;
  readonly halfDay?: 'FirstHalf' | 'SecondHalf';
  readonly type: ExceptionTypeName;
  readonly isPaid: boolean;
  status: ExceptionStatusName;
  readonly requiresApproval: boolean;
  readonly batchId?: string;
  readonly createdByName: string;
  readonly created: string;
  approvedByName?: string;
  approvedAt?: string;
  readonly rejectedAt?: string;
  readonly cancelledAt?: string;
}

export interface HolidayRow {
  readonly id: string;
  readonly organizationId: string;
  readonly name: string;
  readonly date: string;
  readonly isRecurring: boolean;
  readonly companyId?: string;
}

/** A public holiday by month and day, every year, in one country. */
export interface PublicHolidayRow {
  readonly name: string;
  /** `MM-DD`. */
  readonly monthDay: string;
  readonly days: number;
  readonly countryId: number;
}

export interface ReportRow extends AbsenceReport {
  readonly organizationId: string;
}

/** Everything the mock service knows. Tests may read it to pick ids; triggers change it. */
export interface MockState {
  readonly countries: Readonly<Record<number, string>>;
  readonly apiKeys: ApiKeyRow[];
  readonly organizations: OrganizationRow[];
  readonly companies: CompanyRow[];
  readonly departments: DepartmentRow[];
  readonly employees: EmployeeRow[];
  readonly leaveTypes: LeaveTypeRow[];
  readonly leaveRequests: LeaveRequestRow[];
  readonly balances: BalanceRow[];
  readonly attendance: AttendanceRow[];
  readonly exceptions: ExceptionRow[];
  readonly holidays: HolidayRow[];
  readonly publicHolidays: PublicHolidayRow[];
  readonly reports: ReportRow[];
}
