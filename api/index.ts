// The `workforce-webhooks/api` entry: the read-API client, its errors, records and parameters.
export type { AttendanceApi } from './attendance.js';
export { type ApiClient, type ApiClientOptions, createApiClient } from './client.js';
export { type CalendarDate, isCalendarDate, toCalendarDate } from './dates.js';
export { ApiError, type ApiErrorOptions, InvalidParameterError } from './errors.js';
export type { LeaveApi } from './leave.js';
export { createRateLimiter, type RateLimiter, type RateLimiterOptions, type Sleep } from './limiter.js';
export type {
  AttendanceListParams,
  ExceptionListParams,
  HolidayParams,
  LeaveBalanceParams,
  LeaveRequestListParams,
  LeaveTypeListParams,
  PageParams,
} from './params.js';
export type {
  AbsenceReport,
  AttendanceException,
  AttendanceRecord,
  CompanyHoliday,
  LeaveBalance,
  LeaveDocument,
  LeaveRequest,
  LeaveRequestDetails,
  LeaveType,
  Page,
  PublicHoliday,
  Reliever,
} from './records.js';
export {
  ATTENDANCE_STATUSES,
  type AttendanceStatusId,
  type AttendanceStatusName,
  type EligibilityCriteria,
  EXCEPTION_STATUSES,
  EXCEPTION_TYPES,
  type ExceptionStatusId,
  type ExceptionStatusName,
  type ExceptionTypeId,
  type ExceptionTypeName,
  LEAVE_STATUSES,
  type LeaveStatusId,
  type LeaveStatusName,
  type Weekday,
  WORK_MODES,
  type WorkModeId,
  type WorkModeName,
} from './statuses.js';
export type { CallOptions } from './transport.js';
