// The four Leave endpoints (permission `Leave: View`); leave dates become `YYYY-MM-DD` calendar dates.
import { iteratePages, pageOf } from './paging.js';
import type { LeaveBalanceParams, LeaveRequestListParams, LeaveTypeListParams } from './params.js';
import { buildQuery, FIELDS, uuid } from './query.js';
import type { LeaveBalance, LeaveRequest, LeaveRequestDetails, LeaveType, Page } from './records.js';
import { object, type Read, withDates } from './shape.js';
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
 * Reads a leave request, its `YYYY-MM-DDT00:00:00` dates cut to the calendar date, never through a `Date`.
 * @example
 * readLeaveRequest(raw, 'data').startDate // '2026-03-02'
 */
function readLeaveRequest<T extends LeaveRequest>(value: unknown, field: string): T {
  return withDates<T>(value, field, ['startDate', 'endDate']);
}

const asIs =
  <T>(): Read<T> =>
  (value, field) =>
    object(value, field) as T;

/**
 * Builds `api.leave` over a transport.
 * @example
 * const leave = createLeaveApi(createTransport({ apiKey, baseUrl }));
 */
export function createLeaveApi(get: Transport): LeaveApi {
  const listRequests: LeaveApi['listRequests'] = async (params, options) =>
    get(
      '/v1/leaverequest/list',
      buildQuery(FIELDS.leaveRequests, params, BOTH_DATES),
      options,
      pageOf(readLeaveRequest<LeaveRequest>),
    );
  const listTypes: LeaveApi['listTypes'] = async (params, options) =>
    get('/v1/leavetype/list', buildQuery(FIELDS.leaveTypes, params), options, pageOf(asIs<LeaveType>()));
  return {
    listRequests,
    iterateRequests: (params = {}, options) => iteratePages((p) => listRequests(p, options), params),
    async getRequest(id, options) {
      const path = `/v1/leaverequest/details/${encodeURIComponent(uuid('id', id))}`;
      return get(path, '', options, readLeaveRequest<LeaveRequestDetails>);
    },
    async getBalance(params, options) {
      // Both are required by the spec: refuse a call without them rather than let the service guess.
      uuid('EmployeeId', params?.employeeId);
      uuid('LeaveTypeId', params?.leaveTypeId);
      const query = buildQuery(FIELDS.leaveBalance, params);
      return get('/v1/leavebalance/get-leave-balance', query, options, asIs<LeaveBalance>());
    },
    listTypes,
    iterateTypes: (params = {}, options) => iteratePages((p) => listTypes(p, options), params),
  };
}
