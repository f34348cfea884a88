// State changes that emit events: approving leave, running the absence report, approving an exception.
import { LEAVE_STATUSES, type LeaveStatusName } from '../../api/statuses.js';
import { leaveDate } from './calendar.js';
import { employeeOf } from './render.js';
import { runAbsenceReport } from './rules.js';
import type { MockState, ReportRow } from './state.js';

/** An event to send: its type and `data`. */
export interface Change {
  readonly type: string;
  readonly data: Record<string, unknown>;
}

const decide = (state: MockState, id: string, to: LeaveStatusName, type: string): Change => {
  const row = state.leaveRequests.find((r) => r.id === id);
  if (row === undefined) throw new Error(`workforce-webhooks mock: no leave request ${id}`);
  // The spec does not show leave transitions; the mock decides only requests still awaiting a decision.
  if (row.statusId !== LEAVE_STATUSES.Submitted && row.statusId !== LEAVE_STATUSES.Pending) {
    throw new Error(`workforce-webhooks mock: leave request ${id} is already decided`);
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
  return {
    type,
    // The fields the spec lists for leave.approved (dates: calendar date with time 00:00:00, no zone).
    data: {
      leaveRequestId: row.id,
      employeeId: row.employeeId,
      leaveTypeId: row.leaveTypeId,
      leaveType: state.leaveTypes.find((t) => t.id === row.leaveTypeId)!.name,
      startDate: leaveDate(row.startDate),
      endDate: leaveDate(row.endDate),
      status: to,
    },
  };
};

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
 * Withdraws one (status Abandoned): `leave.cancelled` (payload not shown; mirrors leave.approved).
 * @example
 * cancelLeave(state, requestId).type // 'leave.cancelled'
 */
export function cancelLeave(state: MockState, id: string): Change {
  return decide(state, id, 'Abandoned', 'leave.cancelled');
}

/**
 * Runs the day's absence report: `attendance.absence_report.completed` carrying `reportId`.
 * @example
 * completeAbsenceReport(state, organizationId, '2026-06-15', new Date().toISOString()).data.reportId
 */
export function completeAbsenceReport(
  state: MockState,
  organizationId: string,
  date: string,
  completedAt: string,
): Change & { readonly report: ReportRow } {
  if (state.reports.some((r) => r.organizationId === organizationId && r.reportDate === date)) {
    throw new Error(`workforce-webhooks mock: the absence report of ${date} has already run`);
  }
  const report = runAbsenceReport(state, organizationId, date, completedAt);
  return {
    type: 'attendance.absence_report.completed',
    data: { reportId: report.reportId, reportDate: date },
    report,
  };
}

/**
 * Approves a Pending exception: `attendance.exception.approved` (payload not shown by the spec).
 * @example
 * approveException(state, exceptionId, new Date().toISOString()).type
 */
export function approveException(state: MockState, id: string, at: string): Change {
  const row = state.exceptions.find((e) => e.id === id);
  if (row === undefined || row.status !== 'Pending') {
    throw new Error(`workforce-webhooks mock: no pending attendance exception ${id}`);
  }
  row.status = 'Approved';
  row.approvedByName = 'Mock HR';
  row.approvedAt = at;
  return {
    type: 'attendance.exception.approved',
    data: {
      exceptionId: row.id,
      employeeId: row.employeeId,
      companyId: employeeOf(state, row.employeeId).companyId,
      status: 'Approved',
    },
  };
}
