// The four Leave endpoints (permission `Leave: View`); leave dates become `YYYY-MM-DD` calendar dates.
import { toCalendarDate } from './dates.js';
import { iteratePages, toPage } from './paging.js';
import type { LeaveBalanceParams, LeaveRequestListParams, LeaveTypeListParams } from './params.js';
import { buildQuery, FIELDS, uuid } from './query.js';
import type { LeaveBalance, LeaveRequest, LeaveRequestDetails, LeaveType, Page } from './records.js';
import type { CallOptions, Transport } from './transport.js';

// Spec: "both must be sent"; the answer to one alone is not shown, so the client never sends one alone.
const BOTH_DATES = ['StartDate', 'EndDate'] as const;

/** `api.leave`: leave requests, balances and types. */
export interface LeaveApi {
  /** One page of leave requests (default 25 a page, newest first). */
  listRequests(params?: LeaveRequestListParams, options?: CallOptions): Promise<Page<LeaveRequest>>;
  /** Every matching leave request, page after page. */
  iterateRequests(
    params?: LeaveRequestListParams,
    options?: CallOptions,
  ): AsyncGenerator<LeaveRequest, void, undefined>;
  /** One leave request with role, department, documents and relievers. */
  getRequest(id: string, options?: CallOptions): Promise<LeaveRequestDetails>;
  /** This year's balance of one leave type for one employee. */
  getBalance(params: LeaveBalanceParams, options?: CallOptions): Promise<LeaveBalance>;
  /** One page of leave types (default 25 a page). */
  listTypes(params?: LeaveTypeListParams, options?: CallOptions): Promise<Page<LeaveType>>;
  iterateTypes(
    params?: LeaveTypeListParams,
    options?: CallOptions,
  ): AsyncGenerator<LeaveType, void, undefined>;
}

/**
 * A leave request with its `YYYY-MM-DDT00:00:00` dates cut to the calendar date, never through a `Date`.
 * @example
 * normaliseLeaveRequest(raw).startDate // '2026-03-02'
 */
export function normaliseLeaveRequest<T extends LeaveRequest>(record: T): T {
  return { ...record, startDate: toCalendarDate(record.startDate), endDate: toCalendarDate(record.endDate) };
}

/**
 * Builds `api.leave` over a transport.
 * @example
 * const leave = createLeaveApi(createTransport({ apiKey, baseUrl }));
 */
export function createLeaveApi(get: Transport): LeaveApi {
  const listRequests: LeaveApi['listRequests'] = async (params, options) =>
    toPage(
      await get('/v1/leaverequest/list', buildQuery(FIELDS.leaveRequests, params, BOTH_DATES), options),
      normaliseLeaveRequest<LeaveRequest>,
    );
  const listTypes: LeaveApi['listTypes'] = async (params, options) =>
    toPage(
      await get('/v1/leavetype/list', buildQuery(FIELDS.leaveTypes, params), options),
      (t: LeaveType) => t,
    );
  return {
    listRequests,
    iterateRequests: (params = {}, options) => iteratePages((p) => listRequests(p, options), params),
    async getRequest(id, options) {
      const path = `/v1/leaverequest/details/${encodeURIComponent(uuid('id', id))}`;
      return normaliseLeaveRequest((await get(path, '', options)) as LeaveRequestDetails);
    },
    async getBalance(params, options) {
      // Both are required by the spec: refuse a call without them rather than let the service guess.
      uuid('EmployeeId', params?.employeeId);
      uuid('LeaveTypeId', params?.leaveTypeId);
      const query = buildQuery(FIELDS.leaveBalance, params);
      return (await get('/v1/leavebalance/get-leave-balance', query, options)) as LeaveBalance;
    },
    listTypes,
    iterateTypes: (params = {}, options) => iteratePages((p) => listTypes(p, options), params),
  };
}
