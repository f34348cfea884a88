// The four Leave endpoints (permission `Leave: View`); leave dates become `YYYY-MM-DD` calendar dates.
import { iteratePages, pageOf } from './paging.js';
import type { LeaveBalanceParams, LeaveRequestListParams, LeaveTypeListParams } from './params.js';
import { buildQuery, FIELDS, uuid } from './query.js';
import type { LeaveBalance, LeaveRequest, LeaveRequestDetails, LeaveType, Page } from './records.js';
import { boolean, integer, list, object, string, withDates } from './shape.js';
import type { EligibilityCriteria } from './statuses.js';
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

/**
 * Reads a balance field by field (spec "Leave balance": five integers), so a count that is text or missing is
 * `invalid_response` naming it rather than a balance that reads as `undefined`.
 * @example
 * readLeaveBalance(raw, 'data').daysRemaining // 12
 */
function readLeaveBalance(value: unknown, field: string): LeaveBalance {
  const row = object(value, field);
  return {
    totalDays: integer(row, 'totalDays', field),
    daysTaken: integer(row, 'daysTaken', field),
    daysRemaining: integer(row, 'daysRemaining', field),
    leavePending: integer(row, 'leavePending', field),
    leaveRejected: integer(row, 'leaveRejected', field),
  };
}

/**
 * Reads a leave type field by field (spec "Leave type"); fields the spec does not list pass as they came.
 * @example
 * readLeaveType(raw, 'data.data[0]').carryForward.expirationDate // 2, March
 */
function readLeaveType(value: unknown, field: string): LeaveType {
  const row = object(value, field);
  const carryForward = object(row.carryForward, `${field}.carryForward`);
  return {
    ...row,
    id: string(row, 'id', field),
    name: string(row, 'name', field),
    description: string(row, 'description', field),
    maxLeaveDays: integer(row, 'maxLeaveDays', field),
    carryForward: {
      maxCarryForwardLimit: integer(carryForward, 'maxCarryForwardLimit', `${field}.carryForward`),
      // A month: 0 = January ... 11 = December.
      expirationDate: integer(carryForward, 'expirationDate', `${field}.carryForward`, { min: 0, max: 11 }),
    },
    eligibilityCriteria: integer(row, 'eligibilityCriteria', field, {
      min: 0,
      max: 4,
    }) as EligibilityCriteria,
    requiresDocument: boolean(row, 'requiresDocument', field),
    requiredDocument: list(row.requiredDocument, `${field}.requiredDocument`, (item, at) => {
      const template = object(item, at);
      return {
        ...template,
        id: string(template, 'id', at),
        name: string(template, 'name', at),
        document: string(template, 'document', at),
      };
    }),
    isActive: boolean(row, 'isActive', field),
    created: string(row, 'created', field),
    lastModified: string(row, 'lastModified', field),
  };
}

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
      pageOf(readLeaveRequest<LeaveRequest>, params?.pageNumber),
    );
  const listTypes: LeaveApi['listTypes'] = async (params, options) =>
    get(
      '/v1/leavetype/list',
      buildQuery(FIELDS.leaveTypes, params),
      options,
      pageOf(readLeaveType, params?.pageNumber),
    );
  return {
    listRequests,
    iterateRequests: (params = {}, options) =>
      iteratePages((p) => listRequests(p, options), params, 'GET /v1/leaverequest/list'),
    async getRequest(id, options) {
      const path = `/v1/leaverequest/details/${encodeURIComponent(uuid('id', id))}`;
      return get(path, '', options, readLeaveRequest<LeaveRequestDetails>);
    },
    async getBalance(params, options) {
      // Both are required by the spec: refuse a call without them rather than let the service guess.
      uuid('EmployeeId', params?.employeeId);
      uuid('LeaveTypeId', params?.leaveTypeId);
      const query = buildQuery(FIELDS.leaveBalance, params);
      return get('/v1/leavebalance/get-leave-balance', query, options, readLeaveBalance);
    },
    listTypes,
    iterateTypes: (params = {}, options) =>
      iteratePages((p) => listTypes(p, options), params, 'GET /v1/leavetype/list'),
  };
}
