// The resources of the read API (spec "Resources and their fields"), as the client returns them.
import type { CalendarDate } from './dates.js';
import type {
  AttendanceStatusName,
  EligibilityCriteria,
  ExceptionStatusName,
  ExceptionTypeName,
  LeaveStatusId,
  LeaveStatusName,
  WorkModeName,
} from './statuses.js';

/** One page of a paged list (spec "Response envelope"). */
export interface Page<T> {
  readonly data: readonly T[];
  readonly pageNumber: number;
  readonly pageSize: number;
  readonly totalRecords: number;
  readonly totalPages: number;
}

/** A leave request as listed. `startDate` / `endDate` are calendar dates (`YYYY-MM-DD`), never shifted. */
export interface LeaveRequest {
  readonly id: string;
  readonly employeeId: string;
  readonly employeeName: string;
  readonly leaveTypeName: string;
  readonly startDate: CalendarDate;
  readonly endDate: CalendarDate;
  /** Working days: weekends, the employee's days off and holidays are not counted. */
  readonly days: number;
  readonly leaveStatusId: LeaveStatusId;
  readonly leaveStatus: LeaveStatusName;
  readonly comments: string;
  /** UTC date-time. */
  readonly requestedOn: string;
}

/** A supporting document: `storage` 0 means `document` is a link, 1 that it opens only in the service's app. */
export interface LeaveDocument {
  readonly id: string;
  readonly name: string;
  readonly mime: string;
  readonly document: string;
  readonly storage: 0 | 1;
}

/** A colleague covering during the leave. */
export interface Reliever {
  readonly id: string;
  readonly fullName: string;
  readonly email: string;
}

/** A leave request with the employee's role, department, documents and relievers. */
export interface LeaveRequestDetails extends LeaveRequest {
  readonly firstName: string;
  readonly lastName: string;
  readonly workMode: WorkModeName;
  readonly jobRoles: readonly string[];
  readonly department: readonly string[];
  readonly documents: readonly LeaveDocument[];
  readonly relievers: readonly Reliever[];
  readonly handoffNote: string;
}

/** An employee's balance of one leave type for this year. */
export interface LeaveBalance {
  readonly totalDays: number;
  readonly daysTaken: number;
  readonly daysRemaining: number;
  readonly leavePending: number;
  readonly leaveRejected: number;
}

/** A leave type. `carryForward.expirationDate` is a month number, 0 = January ... 11 = December. */
export interface LeaveType {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly maxLeaveDays: number;
  readonly carryForward: { readonly maxCarryForwardLimit: number; readonly expirationDate: number };
  readonly eligibilityCriteria: EligibilityCriteria;
  readonly requiresDocument: boolean;
  readonly requiredDocument: readonly {
    readonly id: string;
    readonly name: string;
    readonly document: string;
  }[];
  readonly isActive: boolean;
  readonly created: string;
  readonly lastModified: string;
}

/** One employee's attendance on one day. Times are `HH:mm:ss` in the company's local time. */
export interface AttendanceRecord {
  readonly id: string;
  readonly employeeId: string;
  readonly firstName: string;
  readonly lastName: string;
  readonly email: string;
  readonly department: string;
  readonly role: string;
  readonly company: { readonly id: string; readonly name: string };
  readonly attendanceDate: CalendarDate;
  readonly applicableDay: string;
  readonly trackingMethod: 'ClockInClockOut' | 'AttendanceOnly';
  readonly clockInTime?: string;
  readonly clockOutTime?: string;
  readonly status: AttendanceStatusName;
  readonly totalWorkedHours: number;
  readonly workmode: WorkModeName;
  readonly location?: string;
  readonly attendanceExceptionId?: string;
  readonly excuseType?: string;
  readonly excusedHalfDay?: 'FirstHalf' | 'SecondHalf';
  readonly needsReview: boolean;
}

/** The absence report of one day; its `reportId` is the one in `attendance.absence_report.completed`. */
export interface AbsenceReport {
  readonly reportId: string;
  readonly reportDate: CalendarDate;
  readonly status: 'Completed' | (string & {});
  readonly isWorkDay: boolean;
  readonly completedAt: string;
  readonly totalEmployeesProcessed: number;
  readonly presentCount: number;
  readonly lateCount: number;
  readonly absentCount: number;
  readonly leaveCount: number;
  readonly holidayCount: number;
  readonly excusedCount: number;
  readonly excusedAbsenceCount: number;
  readonly unexcusedAbsenceCount: number;
}

/** A day (or days) HR excused. The reason, remarks, attachment and history are withheld from API keys. */
export interface AttendanceException {
  readonly id: string;
  readonly employeeId: string;
  readonly employeeName: string;
  readonly companyId: string;
  readonly startDate: CalendarDate;
  readonly endDate: CalendarDate;
  /** Calendar days covered; a half day counts as one. */
  readonly days: number;
  readonly halfDay?: 'FirstHalf' | 'SecondHalf';
  readonly type: ExceptionTypeName;
  readonly isPaid: boolean;
  readonly status: ExceptionStatusName;
  readonly requiresApproval: boolean;
  readonly batchId?: string;
  readonly createdByName: string;
  readonly created: string;
  readonly approvedByName?: string;
  readonly approvedAt?: string;
  readonly rejectedAt?: string;
  readonly cancelledAt?: string;
  /** Always false for an API key. */
  readonly canCancel: boolean;
}

/** A holiday or closure the organisation added; `companyId` / `companyName` are absent when organisation-wide. */
export interface CompanyHoliday {
  readonly id: string;
  readonly name: string;
  /** The date it was added for; for a recurring holiday, its first year. */
  readonly date: CalendarDate;
  /** The day it falls on in the requested year. */
  readonly occursOn: CalendarDate;
  readonly isRecurring: boolean;
  readonly companyId?: string;
  readonly companyName?: string;
}

/** A public holiday from a public calendar; `endDate` is inclusive. */
export interface PublicHoliday {
  readonly name: string;
  readonly startDate: CalendarDate;
  readonly endDate: CalendarDate;
  readonly countryId: number;
  readonly countryName: string;
}
