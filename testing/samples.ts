// Realistic `data` for each event type the spec names, for test deliveries sent without data of their own.
import type { SpecEventDataMap, UnknownEventData } from '../src/types.js';
import { addDays, leaveDate, weekday } from './mock-service/calendar.js';

const sampleIds = {
  leaveRequestId: '5a3b1e00-0000-4000-8000-000000000001',
  employeeId: '5a3b1e00-0000-4000-8000-000000000002',
  leaveTypeId: '5a3b1e00-0000-4000-8000-000000000003',
  reportId: '5a3b1e00-0000-4000-8000-000000000004',
  exceptionId: '5a3b1e00-0000-4000-8000-000000000005',
  companyId: '5a3b1e00-0000-4000-8000-000000000006',
  payrollRunId: '5a3b1e00-0000-4000-8000-000000000007',
  loanId: '5a3b1e00-0000-4000-8000-000000000008',
  candidateId: '5a3b1e00-0000-4000-8000-000000000009',
  jobOpeningId: '5a3b1e00-0000-4000-8000-00000000000a',
  offerId: '5a3b1e00-0000-4000-8000-00000000000b',
  approvalId: '5a3b1e00-0000-4000-8000-00000000000c',
} as const;

/** Ids of the samples: fixed, so a test can look for them, and plainly not the service's. */
export const SAMPLE_IDS: typeof sampleIds = Object.freeze(sampleIds);

/**
 * The sample data of `T`: the spec's fields where it shows them, else ids of the area with `sample: true`. Typed from
 * the spec's map, not the app's: a payload given to `EventDataMap` is not what the sample holds.
 */
export type SampleData<T extends string> = T extends keyof SpecEventDataMap
  ? SpecEventDataMap[T]
  : UnknownEventData;

/** Options of `sampleEventData`. */
export interface SampleOptions {
  /** Leave samples run Monday to Friday two weeks after this day; default now. */
  readonly now?: () => number;
}

/**
 * Realistic `data` for `type`: `leave.approved` with the spec's seven fields and calendar dates
 * (`YYYY-MM-DDT00:00:00`), `attendance.absence_report.completed` with a `reportId`, and for the other named types,
 * whose payload the spec does not show, the ids their area implies marked `sample: true`. `{}` for other types.
 * @example
 * sampleEventData('leave.approved').startDate // '2026-12-07T00:00:00'
 */
export function sampleEventData<T extends string>(
  type: T,
  { now = Date.now }: SampleOptions = {},
): SampleData<T> {
  const ids = SAMPLE_IDS;
  const leave = (status: string) => ({
    leaveRequestId: ids.leaveRequestId,
    employeeId: ids.employeeId,
    leaveTypeId: ids.leaveTypeId,
    leaveType: 'Annual Leave',
    ...leaveDates(now()),
    status,
  });
  const guessed: Record<string, UnknownEventData> = {
    'webhook.test': {},
    'leave.requested': leave('Submitted'),
    'leave.rejected': leave('Rejected'),
    'leave.cancelled': leave('Abandoned'),
    'attendance.exception.approved': {
      exceptionId: ids.exceptionId,
      employeeId: ids.employeeId,
      companyId: ids.companyId,
      status: 'Approved',
    },
    'employee.created': { employeeId: ids.employeeId, companyId: ids.companyId },
    'employee.terminated': { employeeId: ids.employeeId, companyId: ids.companyId },
    'payroll.paid': { payrollRunId: ids.payrollRunId },
    'payroll.transfer_failed': { payrollRunId: ids.payrollRunId, employeeId: ids.employeeId },
    'loan.disbursed': { loanId: ids.loanId, employeeId: ids.employeeId },
    'candidate.stage_changed': { candidateId: ids.candidateId, jobOpeningId: ids.jobOpeningId },
    'offer.accepted': { offerId: ids.offerId, candidateId: ids.candidateId },
    'approval.completed': { approvalId: ids.approvalId, status: 'Approved' },
  };
  // The two payloads the spec shows, exactly; the others are marked, since their fields are a guess.
  if (type === 'leave.approved') return leave('Approved') as SampleData<T>;
  if (type === 'attendance.absence_report.completed') return { reportId: ids.reportId } as SampleData<T>;
  const data = Object.hasOwn(guessed, type) ? guessed[type] : undefined;
  return (data === undefined ? {} : { ...data, sample: true }) as SampleData<T>;
}

/** Monday to Friday of the week two weeks after `at`, as calendar dates with time 00:00:00 and no zone. */
function leaveDates(at: number): { startDate: string; endDate: string } {
  let monday = addDays(new Date(at).toISOString().slice(0, 10), 14);
  while (weekday(monday) !== 'Monday') monday = addDays(monday, -1);
  return { startDate: leaveDate(monday), endDate: leaveDate(addDays(monday, 4)) };
}
