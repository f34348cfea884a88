// The service's calendar and leave rules the mock applies: holidays, working days, approved leave, balances.
import type { LeaveBalance } from '../../api/records.js';
import { LEAVE_STATUSES } from '../../api/statuses.js';
import { addDays, eachDay, isWeekend, recurringDay, weekday } from './calendar.js';
import type { EmployeeRow, ExceptionRow, HolidayRow, MockState, PublicHolidayRow } from './state.js';

/**
 * Ids the mock hands out, deterministic per kind and number so fixtures are the same on every run.
 * @example
 * mockId(0, 1) // '00000000-0000-4000-8000-000000000001'
 */
export function mockId(kind: number, n: number): string {
  return `${kind.toString(16).padStart(8, '0')}-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
}

/**
 * The country ids of a company and its offices.
 * @example
 * companyCountries(state, companyId) // [1, 2]
 */
export function companyCountries(state: MockState, companyId: string): number[] {
  const company = state.companies.find((c) => c.id === companyId);
  return company === undefined ? [] : [company.countryId, ...company.officeCountryIds];
}

/**
 * The day a company holiday falls on in `year` (spec "Company holiday" `occursOn`), or undefined when it does
 * not fall in that year; a recurring Feb 29 falls on Feb 28 in a common year.
 * @example
 * holidayDay({ ...row, date: '2024-02-29', isRecurring: true }, 2027) // '2027-02-28'
 */
export function holidayDay(row: HolidayRow, year: number): string | undefined {
  if (!row.isRecurring) return row.date.startsWith(`${year}-`) ? row.date : undefined;
  // A recurring holiday repeats from the year it was added for, never before it.
  return Number(row.date.slice(0, 4)) <= year ? recurringDay(row.date.slice(5), year) : undefined;
}

/**
 * The first and last day of a public holiday in `year`: it starts on its `MM-DD` and lasts `days` days.
 * @example
 * publicHolidaySpan({ ...row, monthDay: '12-25', days: 2 }, 2026) // { startDate: '2026-12-25', endDate: '2026-12-26' }
 */
export function publicHolidaySpan(
  row: Pick<PublicHolidayRow, 'monthDay' | 'days'>,
  year: number,
): { startDate: string; endDate: string } {
  const startDate = recurringDay(row.monthDay, year);
  return { startDate, endDate: addDays(startDate, row.days - 1) };
}

/**
 * True when `date` is a public holiday of the employee's company's country, or a company holiday of the
 * organisation (organisation-wide or of the employee's company). A day that is both counts once.
 * @example
 * isHoliday(state, employee, '2026-12-25')
 */
export function isHoliday(state: MockState, employee: EmployeeRow, date: string): boolean {
  const year = Number(date.slice(0, 4));
  const company = state.companies.find((c) => c.id === employee.companyId);
  // An employee keeps the public holidays of their company's own country; its offices' countries are listed
  // for the company (spec "holidays/public") but the fixtures place no employee in an office abroad.
  const publicDay = state.publicHolidays.some(
    (h) =>
      h.countryId === company?.countryId &&
      // Last year's too: a holiday of several days can run into January.
      [year - 1, year].some((y) => {
        const { startDate, endDate } = publicHolidaySpan(h, y);
        return date >= startDate && date <= endDate;
      }),
  );
  const companyDay = state.holidays.some(
    (h) =>
      h.organizationId === employee.organizationId &&
      (h.companyId === undefined || h.companyId === employee.companyId) &&
      holidayDay(h, year) === date,
  );
  return publicDay || companyDay;
}

/**
 * True on a day the employee never works: a weekend or one of their own days off.
 * @example
 * isRestDay({ ...employee, daysOff: ['Friday'] }, '2026-06-19') // true
 */
export function isRestDay(employee: EmployeeRow, date: string): boolean {
  return isWeekend(date) || (employee.daysOff ?? []).includes(weekday(date));
}

/**
 * True on a day the employee is expected at work: not a rest day and not a holiday.
 * @example
 * isWorkingDay(state, employee, '2026-06-15') // true
 */
export function isWorkingDay(state: MockState, employee: EmployeeRow, date: string): boolean {
  return !isRestDay(employee, date) && !isHoliday(state, employee, date);
}

/**
 * Working days in a range (spec "Leave request" `days`: weekends, the employee's days off and holidays are
 * not counted).
 * @example
 * workingDays(state, employee, '2026-03-02', '2026-03-08') // 5
 */
export function workingDays(state: MockState, employee: EmployeeRow, start: string, end: string): number {
  return eachDay(start, end).filter((d) => isWorkingDay(state, employee, d)).length;
}

/**
 * True when an approved leave request of the employee covers `date`.
 * @example
 * onLeave(state, employee.id, '2026-03-03')
 */
export function onLeave(state: MockState, employeeId: string, date: string): boolean {
  return state.leaveRequests.some(
    (r) =>
      r.employeeId === employeeId &&
      r.statusId === LEAVE_STATUSES.Approved &&
      r.startDate <= date &&
      r.endDate >= date,
  );
}

/**
 * The approved exception covering `date` for this employee, a whole-day one before a half-day one.
 * @example
 * approvedException(state, employee.id, '2026-06-12')?.type
 */
export function approvedException(
  state: MockState,
  employeeId: string,
  date: string,
): ExceptionRow | undefined {
  const covering = state.exceptions.filter(
    (e) => e.employeeId === employeeId && e.status === 'Approved' && e.startDate <= date && e.endDate >= date,
  );
  return covering.find((e) => e.halfDay === undefined) ?? covering[0];
}

/**
 * This year's balance (spec "Leave balance"), always in agreement with the leave list: the year's approved,
 * undecided and rejected requests give `daysTaken`, `leavePending` and `leaveRejected`.
 * @example
 * leaveBalance(state, employee, leaveTypeId, '2026').daysRemaining
 */
export function leaveBalance(
  state: MockState,
  employee: EmployeeRow,
  leaveTypeId: string,
  year: string,
): LeaveBalance {
  const type = state.leaveTypes.find((t) => t.id === leaveTypeId)!;
  // Rule 1: a pair never set up has the type's full allowance. Its counts still come from the requests, so
  // "nothing taken" holds exactly when the employee has no request of the type (a request implies a balance
  // in the service; the mock does not make one up for every request).
  const totalDays =
    state.balances.find((b) => b.employeeId === employee.id && b.leaveTypeId === leaveTypeId)?.totalDays ??
    type.maxLeaveDays;
  const sum = (statuses: number[]): number =>
    state.leaveRequests
      .filter(
        (r) =>
          r.employeeId === employee.id &&
          r.leaveTypeId === leaveTypeId &&
          r.startDate.startsWith(`${year}-`) &&
          statuses.includes(r.statusId),
      )
      .reduce((days, r) => days + workingDays(state, employee, r.startDate, r.endDate), 0);
  const daysTaken = sum([LEAVE_STATUSES.Approved]);
  return {
    totalDays,
    daysTaken,
    daysRemaining: totalDays - daysTaken,
    leavePending: sum([LEAVE_STATUSES.Submitted, LEAVE_STATUSES.Pending]),
    leaveRejected: sum([LEAVE_STATUSES.Rejected]),
  };
}
