// State changes that emit events: leave requested and decided, the absence report run, an exception approved.
import { isCalendarDate } from '../../api/dates.js';
import { LEAVE_STATUSES, type LeaveStatusName } from '../../api/statuses.js';
import { refreshRecords, runAbsenceReport } from './attendance.js';
import { leaveDate } from './calendar.js';
import { employeeOf } from './render.js';
import { mockId } from './rules.js';
import type { LeaveRequestRow, MockState, ReportRow } from './state.js';

/** An event to send: its type, `data`, and the organisation of the record it is about. */
export interface Change {
  readonly type: string;
  readonly data: Record<string, unknown>;
  readonly organizationId: string;
}

/** What an employee asks for in `requestLeave`. */
export interface LeaveRequestInput {
  readonly employeeId: string;
  readonly leaveTypeId: string;
  /** `YYYY-MM-DD`, first day off. */
  readonly startDate: string;
  /** `YYYY-MM-DD`, last day off; default `startDate`. */
  readonly endDate?: string;
  readonly comments?: string;
}

const fail = (message: string): Error => new Error(`workforce-webhooks mock: ${message}`);

// The fields the spec lists for leave.approved (dates: calendar date with time 00:00:00, no zone); the other
// leave events' payloads are not shown, so they carry the same fields with their own status.
const leaveEvent = (
  state: MockState,
  row: LeaveRequestRow,
  type: string,
  status: LeaveStatusName,
): Change => ({
  type,
  organizationId: employeeOf(state, row.employeeId).organizationId,
  data: {
    leaveRequestId: row.id,
    employeeId: row.employeeId,
    leaveTypeId: row.leaveTypeId,
    leaveType: state.leaveTypes.find((t) => t.id === row.leaveTypeId)!.name,
    startDate: leaveDate(row.startDate),
    endDate: leaveDate(row.endDate),
    status,
  },
});

const decide = (
  state: MockState,
  id: string,
  to: LeaveStatusName,
  type: string,
  from: readonly LeaveStatusName[] = ['Submitted', 'Pending'],
): Change => {
  const row = state.leaveRequests.find((r) => r.id === id);
  if (row === undefined) throw fail(`no leave request ${id}`);
  // The spec does not show leave transitions: the mock decides requests still awaiting a decision, and
  // cancels those or approved ones ("freeing them on leave.cancelled").
  if (!from.some((name) => LEAVE_STATUSES[name] === row.statusId)) {
    throw fail(`leave request ${id} is already decided`);
  }
  row.statusId = LEAVE_STATUSES[to];
  if (
    to === 'Approved' &&
    !state.balances.some((b) => b.employeeId === row.employeeId && b.leaveTypeId === row.leaveTypeId)
  ) {
    const type = state.leaveTypes.find((t) => t.id === row.leaveTypeId)!;
    state.balances.push({
      employeeId: row.employeeId,
      leaveTypeId: row.leaveTypeId,
      totalDays: type.maxLeaveDays,
    });
  }
  // Days already reported say Leave exactly while the leave is approved.
  refreshRecords(state, row.employeeId, row.startDate, row.endDate);
  return leaveEvent(state, row, type, to);
};

/**
 * An employee asks for leave: a Submitted request, and `leave.requested` (payload not shown by the spec; the
 * mock mirrors leave.approved with status `Submitted`).
 * @example
 * requestLeave(state, { employeeId, leaveTypeId, startDate: '2026-07-06', endDate: '2026-07-10' }, new Date().toISOString())
 */
export function requestLeave(state: MockState, input: LeaveRequestInput, requestedOn: string): Change {
  const { employeeId, leaveTypeId, startDate, endDate = startDate, comments = '' } = input;
  const employee = state.employees.find((e) => e.id === employeeId);
  const type = state.leaveTypes.find((t) => t.id === leaveTypeId);
  if (employee === undefined) throw fail(`no employee ${employeeId}`);
  if (type === undefined || type.organizationId !== employee.organizationId) {
    throw fail(`no leave type ${leaveTypeId} in the employee's organisation`);
  }
  if (!isCalendarDate(startDate) || !isCalendarDate(endDate) || endDate < startDate) {
    throw fail(
      `leave runs from a real day to the same or a later one, written YYYY-MM-DD (${startDate}..${endDate})`,
    );
  }
  const row: LeaveRequestRow = {
    id: mockId(0x1eae, 0x1000 + state.leaveRequests.length),
    employeeId,
    leaveTypeId,
    startDate,
    endDate,
    statusId: LEAVE_STATUSES.Submitted,
    comments,
    requestedOn,
    documents: [],
    relieverIds: [],
    handoffNote: '',
  };
  state.leaveRequests.push(row);
  return leaveEvent(state, row, 'leave.requested', 'Submitted');
}

/**
 * Approves a Submitted or Pending leave request: `leave.approved` with the spec's fields.
 * @example
 * const { type, data } = approveLeave(state, requestId); // 'leave.approved'
 */
export function approveLeave(state: MockState, id: string): Change {
  return decide(state, id, 'Approved', 'leave.approved');
}

/**
 * Rejects one: `leave.rejected` (payload not shown by the spec; the mock mirrors leave.approved).
 * @example
 * rejectLeave(state, requestId).type // 'leave.rejected'
 */
export function rejectLeave(state: MockState, id: string): Change {
  return decide(state, id, 'Rejected', 'leave.rejected');
}

/**
 * Withdraws a request still awaiting a decision or already approved (status Abandoned, "withdrawn by the
 * employee or HR"): `leave.cancelled` (payload not shown; mirrors leave.approved with status `Abandoned`).
 * @example
 * cancelLeave(state, requestId).type // 'leave.cancelled'
 */
export function cancelLeave(state: MockState, id: string): Change {
  return decide(state, id, 'Abandoned', 'leave.cancelled', ['Submitted', 'Pending', 'Approved']);
}

/**
 * Runs the day's absence report: `attendance.absence_report.completed` carrying `reportId`; `today` is the mock's.
 * @example
 * completeAbsenceReport(state, organizationId, '2026-06-15', new Date().toISOString(), '2026-06-15').data.reportId
 */
export function completeAbsenceReport(
  state: MockState,
  organizationId: string,
  date: string,
  completedAt: string,
  today: string,
): Change & { readonly report: ReportRow } {
  if (!isCalendarDate(date)) throw fail(`${date} is not a real day written YYYY-MM-DD`);
  // Spec "Attendance status": HR runs it for a day, after which the day's records are complete; a day still to come
  // would be complete before it began, everyone Absent whose clock-in has yet to happen.
  if (date > today)
    throw fail(
      `${date} is after the mock's today (${today}): an absence report runs for a day that has happened; give today or an earlier day, or start the mock with a later today`,
    );
  if (state.reports.some((r) => r.organizationId === organizationId && r.reportDate === date)) {
    throw fail(`the absence report of ${date} has already run`);
  }
  const report = runAbsenceReport(state, organizationId, date, completedAt);
  return {
    type: 'attendance.absence_report.completed',
    organizationId,
    data: { reportId: report.reportId, reportDate: date },
    report,
  };
}

/**
 * Approves a Pending exception: the attendance records of the days it covers become Excused (spec "Only
 * exceptions with status Approved change attendance"), and `attendance.exception.approved` is sent (payload
 * not shown by the spec; the mock names the exception, the employee, the company and the days).
 * @example
 * approveException(state, exceptionId, new Date().toISOString()).type
 */
export function approveException(state: MockState, id: string, at: string): Change {
  const row = state.exceptions.find((e) => e.id === id);
  if (row === undefined || row.status !== 'Pending') throw fail(`no pending attendance exception ${id}`);
  row.status = 'Approved';
  row.approvedByName = 'Mock HR';
  row.approvedAt = at;
  refreshRecords(state, row.employeeId, row.startDate, row.endDate);
  return {
    type: 'attendance.exception.approved',
    organizationId: employeeOf(state, row.employeeId).organizationId,
    data: {
      exceptionId: row.id,
      employeeId: row.employeeId,
      companyId: employeeOf(state, row.employeeId).companyId,
      startDate: row.startDate,
      endDate: row.endDate,
      status: 'Approved',
    },
  };
}
