// Parameters of the endpoints, camelCase: the spec's query names with a lower-case first letter.
// Names and numbers from the spec's tables are typed as their unions; `buildQuery` refuses anything else at run time.
import type {
  AttendanceStatusId,
  AttendanceStatusName,
  EligibilityCriteria,
  ExceptionStatusId,
  ExceptionStatusName,
  ExceptionTypeId,
  ExceptionTypeName,
  LeaveStatusId,
  LeaveStatusName,
  Weekday,
  WorkModeId,
  WorkModeName,
} from './statuses.js';

/** Paging of the paged lists. */
export interface PageParams {
  /** 1-based; default 1. */
  readonly pageNumber?: number;
  readonly pageSize?: number;
}

/** `GET /v1/leaverequest/list`. `startDate` and `endDate` go together (leave starting between them). */
export interface LeaveRequestListParams extends PageParams {
  readonly companyId?: string;
  readonly departmentId?: string;
  readonly leaveTypeId?: string;
  readonly leaveStatus?: LeaveStatusName | LeaveStatusId;
  readonly startDate?: string;
  readonly endDate?: string;
  /** The employee's name or email, or the leave type's name. */
  readonly searchTerm?: string;
  /** 0 oldest first, 1 newest first (default). */
  readonly orderBy?: 0 | 1;
}

/** `GET /v1/leavebalance/get-leave-balance`. */
export interface LeaveBalanceParams {
  readonly employeeId: string;
  readonly leaveTypeId: string;
}

/** `GET /v1/leavetype/list`. */
export interface LeaveTypeListParams extends PageParams {
  readonly companyId?: string;
  readonly searchTerm?: string;
  readonly isActive?: boolean;
  readonly eligibilityCriteria?: EligibilityCriteria;
}

/** `GET /v1/attendance/list`. `department` and `unit` are uuids. */
export interface AttendanceListParams extends PageParams {
  readonly startDate?: string;
  readonly endDate?: string;
  readonly employeeId?: string;
  readonly companyId?: string;
  readonly department?: string;
  readonly unit?: string;
  readonly status?: AttendanceStatusName | AttendanceStatusId;
  readonly workMode?: WorkModeName | WorkModeId;
  readonly applicableDay?: Weekday;
  /** True selects clock-ins on fully excused days. */
  readonly needsReview?: boolean;
  /** Part of the employee's first or last name. */
  readonly searchTerm?: string;
}

/** `GET /v1/attendance/exceptions`. `pageSize` is at most 100. */
export interface ExceptionListParams extends PageParams {
  /** Exceptions covering any day from `from` to `to`. */
  readonly from?: string;
  readonly to?: string;
  readonly employeeId?: string;
  readonly companyId?: string;
  readonly departmentId?: string;
  readonly status?: ExceptionStatusName | ExceptionStatusId;
  readonly type?: ExceptionTypeName | ExceptionTypeId;
  readonly batchId?: string;
  /** Part of the employee's name. */
  readonly search?: string;
}

/** `GET /v1/attendance/holidays` and `/holidays/public`. `year` defaults to the current year. */
export interface HolidayParams {
  readonly year?: number;
  readonly companyId?: string;
}
