// The six Attendance endpoints of the mock (spec "Attendance"), with every filter and default of its tables.
import {
  ATTENDANCE_STATUSES,
  EXCEPTION_STATUSES,
  EXCEPTION_TYPES,
  WEEKDAYS,
  WORK_MODES,
} from '../../api/statuses.js';
import { MockApiFailure, matches, paginate } from './query.js';
import {
  employeeOf,
  organizationCountries,
  renderAttendance,
  renderException,
  renderHoliday,
  renderPublicHolidays,
} from './render.js';
import type { Route } from './route.js';
import { companyCountries } from './rules.js';

const ID = '([0-9a-fA-F-]{36})';

// The exceptions endpoints need Attendance: View, as the other four. The spec says both that they "need the permission
// View Attendance Exceptions, which Attendance: View includes" ("GET /v1/attendance/exceptions") and that "all six
// Attendance endpoints need Attendance: View" (Authentication rule 3). A key holding only View Attendance Exceptions
// passes the first and fails the second: the mock refuses it, the stricter reading, so that a key that works here
// works against the service under either.
const EXCEPTIONS_PERMISSION = 'Attendance: View';

const notFound = (what: string): MockApiFailure =>
  new MockApiFailure(404, 'not_found', `${what} was not found in this organisation`);

/**
 * `GET /v1/attendance/list`, `/report/{id}`, `/exceptions`, `/exceptions/{id}`, `/holidays`, `/holidays/public`.
 * @example
 * attendanceRoutes.find((r) => r.pattern.test('/v1/attendance/list'))
 */
export const attendanceRoutes: readonly Route[] = [
  {
    pattern: /^\/v1\/attendance\/list$/,
    permission: 'Attendance: View',
    handle({ state, organizationId, query }) {
      const [from, to] = [query.date('StartDate'), query.date('EndDate')];
      const [employeeId, companyId] = [query.uuid('EmployeeId'), query.uuid('CompanyId')];
      const [department, unit] = [query.uuid('Department'), query.uuid('Unit')];
      const status = query.named('Status', ATTENDANCE_STATUSES);
      const workMode = query.named('WorkMode', WORK_MODES);
      const day = query.text('ApplicableDay');
      if (day !== undefined && !WEEKDAYS.some((d) => d.toLowerCase() === day.toLowerCase())) {
        throw new MockApiFailure(400, 'invalid_parameter', 'ApplicableDay must be a weekday name');
      }
      const needsReview = query.bool('NeedsReview');
      const term = query.text('SearchTerm');
      const records = state.attendance
        .map((row) => ({ row, e: employeeOf(state, row.employeeId) }))
        .filter(
          ({ row, e }) =>
            e.organizationId === organizationId &&
            (from === undefined || row.date >= from) &&
            (to === undefined || row.date <= to),
        )
        .filter(({ e }) => (employeeId ?? e.id) === e.id && (companyId ?? e.companyId) === e.companyId)
        .filter(
          ({ e }) =>
            (department ?? e.departmentId) === e.departmentId && (unit === undefined || e.unitId === unit),
        )
        .filter(({ row }) => status === undefined || row.status === ATTENDANCE_STATUSES[status])
        .filter(
          ({ row }) =>
            (workMode ?? row.workMode) === row.workMode &&
            (needsReview ?? row.needsReview) === row.needsReview,
        )
        .filter(({ e }) => matches(term, e.firstName, e.lastName))
        .map(({ row }) => renderAttendance(state, row))
        .filter((r) => day === undefined || r.applicableDay.toLowerCase() === day.toLowerCase())
        // Spec: most recent day first.
        .sort(
          (a, b) => b.attendanceDate.localeCompare(a.attendanceDate) || a.lastName.localeCompare(b.lastName),
        );
      return paginate(records, query, 10);
    },
  },
  {
    pattern: new RegExp(`^/v1/attendance/report/${ID}$`),
    permission: 'Attendance: View',
    handle({ state, organizationId, id }) {
      const report = state.reports.find((r) => r.reportId === id && r.organizationId === organizationId);
      if (report === undefined) throw notFound('the absence report');
      const { organizationId: _, ...body } = report;
      return body;
    },
  },
  {
    pattern: /^\/v1\/attendance\/exceptions$/,
    permission: EXCEPTIONS_PERMISSION,
    handle({ state, organizationId, query }) {
      // Spec "Limits": PageSize at most 100 here.
      const pageSize = query.optionalInt('PageSize', 1, Number.MAX_SAFE_INTEGER);
      if (pageSize !== undefined && pageSize > 100)
        throw new MockApiFailure(400, 'invalid_parameter', 'PageSize must be at most 100');
      const [from, to] = [query.date('From'), query.date('To')];
      const [employeeId, companyId, departmentId] = [
        query.uuid('EmployeeId'),
        query.uuid('CompanyId'),
        query.uuid('DepartmentId'),
      ];
      const status = query.named('Status', EXCEPTION_STATUSES);
      const type = query.named('Type', EXCEPTION_TYPES);
      const batchId = query.uuid('BatchId');
      const term = query.text('Search');
      const rows = state.exceptions
        .map((row) => ({ row, e: employeeOf(state, row.employeeId) }))
        .filter(({ e }) => e.organizationId === organizationId)
        // "Covering any day in this range": the spans overlap.
        .filter(
          ({ row }) =>
            (from === undefined || row.endDate >= from) && (to === undefined || row.startDate <= to),
        )
        .filter(
          ({ e }) =>
            (employeeId ?? e.id) === e.id &&
            (companyId ?? e.companyId) === e.companyId &&
            (departmentId ?? e.departmentId) === e.departmentId,
        )
        .filter(({ row }) => (status ?? row.status) === row.status && (type ?? row.type) === row.type)
        .filter(({ row }) => batchId === undefined || row.batchId === batchId)
        .filter(({ e }) => matches(term, `${e.firstName} ${e.lastName}`))
        .sort((a, b) => b.row.startDate.localeCompare(a.row.startDate) || a.row.id.localeCompare(b.row.id))
        .map(({ row }) => renderException(state, row));
      return paginate(rows, query, 20, 100);
    },
  },
  {
    pattern: new RegExp(`^/v1/attendance/exceptions/${ID}$`),
    permission: EXCEPTIONS_PERMISSION,
    handle({ state, organizationId, id }) {
      const row = state.exceptions.find((e) => e.id === id);
      // Spec: an id outside the caller's organisation gives isSuccessful false.
      if (row === undefined || employeeOf(state, row.employeeId).organizationId !== organizationId) {
        throw notFound('the attendance exception');
      }
      return renderException(state, row);
    },
  },
  {
    pattern: /^\/v1\/attendance\/holidays$/,
    permission: 'Attendance: View',
    handle({ state, organizationId, query, today }) {
      const year = query.optionalInt('Year', 1, 9999) ?? Number(today.slice(0, 4));
      const companyId = query.uuid('CompanyId');
      return state.holidays
        .filter((h) => h.organizationId === organizationId)
        .filter((h) => companyId === undefined || h.companyId === undefined || h.companyId === companyId)
        .flatMap((h) => renderHoliday(state, h, year) ?? [])
        .sort((a, b) => a.occursOn.localeCompare(b.occursOn));
    },
  },
  {
    pattern: /^\/v1\/attendance\/holidays\/public$/,
    permission: 'Attendance: View',
    handle({ state, organizationId, query, today }) {
      const year = query.optionalInt('Year', 1, 9999) ?? Number(today.slice(0, 4));
      const companyId = query.uuid('CompanyId');
      if (companyId === undefined)
        return renderPublicHolidays(state, organizationCountries(state, organizationId), year);
      const company = state.companies.find((c) => c.id === companyId && c.organizationId === organizationId);
      if (company === undefined) throw notFound('the company');
      return renderPublicHolidays(state, companyCountries(state, company.id), year);
    },
  },
];
