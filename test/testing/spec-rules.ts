// Every rule the spec states about the data, checked over all of a mock's data through its HTTP API.
import type { MockService } from 'workforce-webhooks/testing';

// biome-ignore lint/suspicious/noExplicitAny: raw JSON, checked field by field against the spec
type Json = any;

const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
/** The mock's attendance policy: a clock-in after 09:00:00 is Late (the spec leaves the value to the policy). */
const LATE_CUT_OFF = '09:00:00';
const LEAVE_STATUS_NAMES = ['Submitted', 'Pending', 'Approved', 'Rejected', 'Abandoned', 'Expired'];

const day = (date: string, days = 0): string => {
  const at = new Date(`${date.slice(0, 10)}T00:00:00Z`);
  at.setUTCDate(at.getUTCDate() + days);
  return at.toISOString().slice(0, 10);
};
const weekdayOf = (date: string): string => WEEKDAYS[new Date(`${date}T00:00:00Z`).getUTCDay()]!;
const isRealDay = (date: unknown): boolean =>
  typeof date === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(date) && day(date) === date;
const isLeap = (year: number): boolean => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
const span = (start: string, end: string): string[] => {
  const days: string[] = [];
  for (let d = start.slice(0, 10); d <= end.slice(0, 10); d = day(d, 1)) days.push(d);
  return days;
};
const seconds = (time: string): number => {
  const [h, m, s] = time.split(':').map(Number) as [number, number, number];
  return h * 3600 + m * 60 + s;
};

/**
 * Reads everything of the mock's main organisation through its API and returns every broken rule, one line
 * each (an empty list when the data holds every rule). `today` is the mock's today: nothing happened after it.
 * @example
 * expect(await specViolations(mock, '2026-06-15')).toEqual([]);
 */
export async function specViolations(mock: MockService, today: string): Promise<string[]> {
  const broken: string[] = [];
  const check = (ok: boolean, rule: string, what: unknown): void => {
    if (!ok) broken.push(`${rule}: ${typeof what === 'string' ? what : JSON.stringify(what)}`);
  };
  const get = async (path: string): Promise<Json> => {
    const response = await fetch(`${mock.baseUrl}${path}`, {
      headers: { authorization: `Bearer ${mock.apiKeys.full}` },
    });
    const body = (await response.json()) as Json;
    if (!body.isSuccessful) throw new Error(`${path}: ${body.message}`);
    return body.data;
  };
  const all = async (path: string, pageSize: number): Promise<Json[]> => {
    const rows: Json[] = [];
    for (let page = 1; ; page++) {
      const data = await get(
        `${path}${path.includes('?') ? '&' : '?'}PageSize=${pageSize}&PageNumber=${page}`,
      );
      rows.push(...data.data);
      if (page >= data.totalPages) return rows;
    }
  };

  // What the API does not show (the Employees and Companies endpoints are not specified): who works where,
  // each company's country, days off, and which balances someone set up.
  const org = mock.organizationId;
  const employees = mock.state.employees.filter((e) => e.organizationId === org);
  const companies = mock.state.companies.filter((c) => c.organizationId === org);
  const employeeById = new Map(employees.map((e) => [e.id, e]));

  const types: Json[] = await all('/v1/leavetype/list', 100);
  const requests: Json[] = await all('/v1/leaverequest/list?OrderBy=0', 100);
  const records: Json[] = await all('/v1/attendance/list', 1000);
  const exceptions: Json[] = await all('/v1/attendance/exceptions', 100);
  const reports: Json[] = await Promise.all(
    mock.state.reports
      .filter((r) => r.organizationId === org)
      .map((r) => get(`/v1/attendance/report/${r.reportId}`)),
  );

  // Holidays of every year the data touches, and the next four (a leap year and common ones).
  const year = Number(today.slice(0, 4));
  const touched = [...records.map((r) => r.attendanceDate), ...requests.map((r) => r.startDate), today];
  const first = Math.min(...touched.map((d: string) => Number(d.slice(0, 4)))) - 1;
  const holidays = new Map<string, Set<string>>(companies.map((c) => [c.id, new Set<string>()]));
  for (let y = first; y <= year + 4; y++) {
    const listed: Json[] = await get(`/v1/attendance/holidays?Year=${y}`);
    check(
      listed.every((h, i) => i === 0 || listed[i - 1].occursOn <= h.occursOn),
      'holidays: "in date order"',
      y,
    );
    for (const h of listed) {
      // Spec "Company holiday": occursOn is the day it falls on in the requested year, a real day.
      const monthDay = h.date.slice(5) === '02-29' && !isLeap(y) ? '02-28' : h.date.slice(5);
      check(
        isRealDay(h.occursOn) && h.occursOn === (h.isRecurring ? `${y}-${monthDay}` : h.date),
        'holiday: "occursOn: the day it falls on in the requested year" (a recurring Feb 29 on Feb 28)',
        h,
      );
    }
    for (const company of companies) {
      const own: Json[] = await get(`/v1/attendance/holidays?Year=${y}&CompanyId=${company.id}`);
      for (const h of own) holidays.get(company.id)!.add(h.occursOn);
      const publicDays: Json[] = await get(
        `/v1/attendance/holidays/public?Year=${y}&CompanyId=${company.id}`,
      );
      for (const h of publicDays) {
        check(
          isRealDay(h.startDate) && isRealDay(h.endDate) && h.startDate <= h.endDate,
          'public holiday',
          h,
        );
        // An employee keeps the public holidays of the company's own country (the mock's documented choice).
        if (h.countryId === company.countryId)
          for (const d of span(h.startDate, h.endDate)) holidays.get(company.id)!.add(d);
      }
    }
  }
  const isHoliday = (employeeId: string, date: string): boolean =>
    holidays.get(employeeById.get(employeeId)!.companyId)!.has(date);
  const isRestDay = (employeeId: string, date: string): boolean => {
    const weekday = weekdayOf(date);
    return (
      weekday === 'Saturday' ||
      weekday === 'Sunday' ||
      (employeeById.get(employeeId)!.daysOff ?? []).includes(weekday)
    );
  };
  const isWorkingDay = (employeeId: string, date: string): boolean =>
    !isRestDay(employeeId, date) && !isHoliday(employeeId, date);

  // Leave requests: days, status names, no request from the future.
  for (const r of requests) {
    const expected = span(r.startDate, r.endDate).filter((d) => isWorkingDay(r.employeeId, d)).length;
    check(
      r.days === expected,
      'leave: "days: working days requested; weekends, the employee\'s days off and holidays are not counted"',
      { id: r.id, days: r.days, expected },
    );
    check(LEAVE_STATUS_NAMES[r.leaveStatusId] === r.leaveStatus, 'leave: status number and name', r);
    check(r.requestedOn.slice(0, 10) <= today, "leave: never requested in the mock's future", r);
    check(/T00:00:00$/.test(r.startDate) && /T00:00:00$/.test(r.endDate), 'leave: calendar dates', r);
  }

  // Balances: every employee, every leave type, in agreement with the list.
  for (const employee of employees) {
    for (const type of types) {
      const mine = requests.filter((r) => r.employeeId === employee.id && r.leaveTypeName === type.name);
      const thisYear = mine.filter((r) => r.startDate.startsWith(`${year}-`));
      const sum = (...statuses: number[]): number =>
        thisYear.filter((r) => statuses.includes(r.leaveStatusId)).reduce((n, r) => n + r.days, 0);
      const setUp = mock.state.balances.find(
        (b) => b.employeeId === employee.id && b.leaveTypeId === type.id,
      );
      const totalDays = setUp?.totalDays ?? type.maxLeaveDays;
      const expected = {
        totalDays,
        daysTaken: sum(2),
        daysRemaining: totalDays - sum(2),
        leavePending: sum(0, 1),
        leaveRejected: sum(3),
      };
      const balance = await get(
        `/v1/leavebalance/get-leave-balance?EmployeeId=${employee.id}&LeaveTypeId=${type.id}`,
      );
      check(
        Object.keys(balance).length === 5 &&
          Object.entries(expected).every(([field, n]) => balance[field] === n),
        'balance: agrees with the leave list (rule 1: full allowance, nothing taken, only without requests)',
        { employee: employee.firstName, type: type.name, balance, expected },
      );
      if (mine.length === 0 && setUp === undefined) {
        check(balance.daysTaken === 0 && balance.totalDays === type.maxLeaveDays, 'balance: rule 1', balance);
      }
    }
  }

  // Exceptions: days, decisions, no decision from the future.
  const approved = exceptions.filter((e) => e.status === 'Approved');
  for (const e of exceptions) {
    check(
      e.days === span(e.startDate, e.endDate).length && (e.halfDay === undefined || e.days === 1),
      'exception: "days: calendar days covered; a half day counts as one"',
      e,
    );
    check(e.canCancel === false, 'exception: "canCancel: always false for an API key"', e);
    check(
      (e.approvedAt !== undefined) === (e.status === 'Approved') &&
        (e.rejectedAt !== undefined) === (e.status === 'Rejected') &&
        (e.cancelledAt !== undefined) === (e.status === 'Cancelled'),
      'exception: "approvedAt, rejectedAt, cancelledAt: time of the decision"',
      e,
    );
    for (const at of [e.created, e.approvedAt, e.rejectedAt, e.cancelledAt].filter(Boolean))
      check(at.slice(0, 10) <= today && at >= e.created, 'exception: nothing decided in the future', e);
  }
  const excuse = (employeeId: string, date: string): Json | undefined => {
    const covering = approved.filter(
      (e) => e.employeeId === employeeId && e.startDate <= date && e.endDate >= date,
    );
    return covering.find((e) => e.halfDay === undefined) ?? covering[0];
  };
  const approvedLeave = requests.filter((r) => r.leaveStatusId === 2);
  const onLeave = (employeeId: string, date: string): boolean =>
    approvedLeave.some(
      (r) =>
        r.employeeId === employeeId && r.startDate.slice(0, 10) <= date && r.endDate.slice(0, 10) >= date,
    );

  // Attendance records: one per employee per day, each status from the facts.
  const seen = new Set<string>();
  for (const r of records) {
    const key = `${r.employeeId} ${r.attendanceDate}`;
    check(!seen.has(key), 'attendance: "one attendance record per employee per day"', key);
    seen.add(key);
    check(r.attendanceDate <= today, 'attendance: no record of a future day', r);
    check(r.applicableDay === weekdayOf(r.attendanceDate), 'attendance: applicableDay is the weekday', r);
    if (r.trackingMethod === 'AttendanceOnly')
      check(r.clockOutTime === undefined, 'attendance: AttendanceOnly has "no clock-out"', r);
    const hours =
      r.clockInTime && r.clockOutTime ? (seconds(r.clockOutTime) - seconds(r.clockInTime)) / 3600 : 0;
    check(
      Math.abs(r.totalWorkedHours - hours) < 0.01,
      'attendance: "hours between clock-in and clock-out"',
      r,
    );
    const clockedIn = r.clockInTime !== undefined;
    const e = excuse(r.employeeId, r.attendanceDate);
    if (e !== undefined) {
      check(
        r.status === 'Excused' &&
          r.attendanceExceptionId === e.id &&
          r.excuseType === e.type &&
          r.excusedHalfDay === e.halfDay,
        'attendance: "an excused employee is never Absent or Late" (Excused, with the exception that excuses it)',
        { record: r, exception: e.id },
      );
      check(
        r.needsReview === (clockedIn && e.halfDay === undefined),
        'attendance: "needsReview: true when the employee clocked in on a fully excused day"',
        r,
      );
      continue;
    }
    check(
      r.attendanceExceptionId === undefined && r.excuseType === undefined && r.excusedHalfDay === undefined,
      'attendance: "attendanceExceptionId: the exception excusing the day, if any"',
      r,
    );
    check(r.needsReview === false, 'attendance: needsReview only on a fully excused day', r);
    const expected = clockedIn
      ? r.clockInTime > LATE_CUT_OFF
        ? 'Late'
        : 'Present'
      : isHoliday(r.employeeId, r.attendanceDate)
        ? 'Holiday'
        : onLeave(r.employeeId, r.attendanceDate)
          ? 'Leave'
          : 'Absent';
    check(r.status === expected, `attendance: status ${expected} from the spec's transitions`, r);
    if (!clockedIn)
      check(!isRestDay(r.employeeId, r.attendanceDate), 'attendance: nobody is expected on a rest day', r);
  }

  // Absence reports: every employee of the day looked at, counts that are the day's records.
  for (const report of reports) {
    const date = report.reportDate;
    const mine = records.filter((r) => r.attendanceDate === date);
    const count = (status: string): number => mine.filter((r) => r.status === status).length;
    const counts = {
      presentCount: count('Present'),
      lateCount: count('Late'),
      absentCount: count('Absent'),
      leaveCount: count('Leave'),
      holidayCount: count('Holiday'),
      excusedCount: count('Excused'),
      excusedAbsenceCount: count('Leave') + count('Holiday') + count('Excused'),
      unexcusedAbsenceCount: count('Absent'),
    };
    check(
      Object.entries(counts).every(([field, n]) => report[field] === n),
      'report: "employees with each status"; excused = leave + holiday + excused; unexcused = absent',
      { report, counts },
    );
    check(
      report.status === 'Completed' && report.completedAt.slice(0, 10) <= today,
      'report: Completed',
      report,
    );
    check(report.totalEmployeesProcessed === employees.length, 'report: every employee processed', report);
    const workDay = employees.some((e) => isWorkingDay(e.id, date));
    check(
      report.isWorkDay === workDay,
      'report: "isWorkDay: false when the day was not a working day" (weekend, holiday or day off for all)',
      { date, isWorkDay: report.isWorkDay, expected: workDay },
    );
    for (const employee of employees) {
      const has = mine.some((r) => r.employeeId === employee.id);
      check(
        has || isRestDay(employee.id, date),
        'report: "after the report for a day has finished, that day\'s records are complete"',
        { date, employee: employee.firstName },
      );
    }
  }
  return broken;
}
