// The four Leave endpoints of the mock (spec "Leave"), with every filter and default of its tables.
import { LEAVE_STATUSES } from '../../api/statuses.js';
import { MockApiFailure, matches, paginate } from './query.js';
import { employeeOf, renderLeaveDetails, renderLeaveRequest } from './render.js';
import type { Route } from './route.js';
import { leaveBalance } from './rules.js';

const ID = '([0-9a-fA-F-]{36})';
const notFound = (what: string): MockApiFailure =>
  new MockApiFailure(404, 'not_found', `${what} was not found in this organisation`);

/**
 * `GET /v1/leaverequest/list`, `/details/{id}`, `/v1/leavebalance/get-leave-balance`, `/v1/leavetype/list`.
 * @example
 * leaveRoutes.find((r) => r.pattern.test('/v1/leavetype/list'))
 */
export const leaveRoutes: readonly Route[] = [
  {
    pattern: /^\/v1\/leaverequest\/list$/,
    permission: 'Leave: View',
    handle({ state, organizationId, query }) {
      const companyId = query.uuid('CompanyId');
      const departmentId = query.uuid('DepartmentId');
      const leaveTypeId = query.uuid('LeaveTypeId');
      const status = query.named('LeaveStatus', LEAVE_STATUSES);
      const [from, to] = [query.date('StartDate'), query.date('EndDate')];
      // Spec: "both must be sent"; the answer to one alone is not shown, the mock refuses it.
      if ((from === undefined) !== (to === undefined)) {
        throw new MockApiFailure(400, 'invalid_parameter', 'StartDate and EndDate must be sent together');
      }
      const term = query.text('SearchTerm');
      const orderBy = query.optionalInt('OrderBy', 0, 1) ?? 1;
      const rows = state.leaveRequests
        .filter((r) => {
          const e = employeeOf(state, r.employeeId);
          const type = state.leaveTypes.find((t) => t.id === r.leaveTypeId)!;
          return (
            e.organizationId === organizationId &&
            (companyId === undefined || e.companyId === companyId) &&
            (departmentId === undefined || e.departmentId === departmentId) &&
            (leaveTypeId === undefined || r.leaveTypeId === leaveTypeId) &&
            (status === undefined || r.statusId === LEAVE_STATUSES[status]) &&
            (from === undefined || (r.startDate >= from && r.startDate <= to!)) &&
            matches(term, `${e.firstName} ${e.lastName}`, e.email, type.name)
          );
        })
        .sort((a, b) => (orderBy === 0 ? 1 : -1) * a.requestedOn.localeCompare(b.requestedOn));
      return paginate(
        rows.map((r) => renderLeaveRequest(state, r)),
        query,
        25,
      );
    },
  },
  {
    pattern: new RegExp(`^/v1/leaverequest/details/${ID}$`),
    permission: 'Leave: View',
    handle({ state, organizationId, id }) {
      const row = state.leaveRequests.find((r) => r.id === id);
      if (row === undefined || employeeOf(state, row.employeeId).organizationId !== organizationId)
        throw notFound('the leave request');
      return renderLeaveDetails(state, row);
    },
  },
  {
    pattern: /^\/v1\/leavebalance\/get-leave-balance$/,
    permission: 'Leave: View',
    handle({ state, organizationId, query, today }) {
      const [employeeId, leaveTypeId] = [query.uuid('EmployeeId'), query.uuid('LeaveTypeId')];
      if (employeeId === undefined || leaveTypeId === undefined) {
        throw new MockApiFailure(400, 'invalid_parameter', 'EmployeeId and LeaveTypeId are required');
      }
      const employee = state.employees.find((e) => e.id === employeeId);
      const type = state.leaveTypes.find((t) => t.id === leaveTypeId);
      // Spec balance rule 2: outside the caller's organisation, isSuccessful is false.
      if (employee?.organizationId !== organizationId || type?.organizationId !== organizationId) {
        throw notFound('the employee or the leave type');
      }
      return leaveBalance(state, employee, leaveTypeId, today.slice(0, 4));
    },
  },
  {
    pattern: /^\/v1\/leavetype\/list$/,
    permission: 'Leave: View',
    handle({ state, organizationId, query }) {
      const companyId = query.uuid('CompanyId');
      const term = query.text('SearchTerm');
      const isActive = query.bool('IsActive');
      const eligibility = query.optionalInt('EligibilityCriteria', 0, 4);
      const rows = state.leaveTypes.filter(
        (t) =>
          t.organizationId === organizationId &&
          (companyId === undefined || t.companyId === companyId) &&
          matches(term, t.name) &&
          (isActive === undefined || t.isActive === isActive) &&
          (eligibility === undefined || t.eligibilityCriteria === eligibility),
      );
      return paginate(
        rows.map(({ organizationId: _o, companyId: _c, ...type }) => type),
        query,
        25,
      );
    },
  },
];
