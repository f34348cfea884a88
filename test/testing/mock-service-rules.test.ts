// The mock held to the spec's sentences one by one: excuses, approvals, leave days, balances, reports, leave events, Feb 29.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createReceiver, type WorkforceEvent } from 'workforce-webhooks';
import { createNodeHandler } from 'workforce-webhooks/node';
import { createMockService, type MockService } from 'workforce-webhooks/testing';
import type { CliIo } from '../../cli/io.js';
import { runCli } from '../../cli/run.js';
import { clockIn } from '../../testing/mock-service/attendance.js';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

async function mockOn(today: string): Promise<MockService> {
  const mock = await createMockService({
    today,
    now: () => Date.parse(`${today}T12:00:00Z`),
    rateLimit: 1e6,
  });
  cleanup.push(() => mock.close());
  return mock;
}

// biome-ignore lint/suspicious/noExplicitAny: raw JSON, checked against the spec
async function get(mock: MockService, path: string): Promise<any> {
  const response = await fetch(`${mock.baseUrl}${path}`, {
    headers: { authorization: `Bearer ${mock.apiKeys.full}` },
  });
  // biome-ignore lint/suspicious/noExplicitAny: raw JSON
  const body = (await response.json()) as any;
  expect(body.isSuccessful, `${path}: ${body.message}`).toBe(true);
  return body.data;
}

const recordOf = async (mock: MockService, employeeId: string, date: string) =>
  (await get(mock, `/v1/attendance/list?EmployeeId=${employeeId}&StartDate=${date}&EndDate=${date}`)).data[0];

/** A real receiver on loopback, subscribed to the mock: the events it handled, in order. */
async function subscribeReceiver(mock: MockService): Promise<WorkforceEvent[]> {
  const secret = 'whsec_rules';
  const handled: WorkforceEvent[] = [];
  const receiver = createReceiver({ secret, mode: 'inline' }).onAny((event) => {
    handled.push(event);
  });
  const server: Server = createServer(createNodeHandler(receiver));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(async () => {
    await receiver.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  mock.subscribe(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, { secret });
  return handled;
}

/** Adds an exception awaiting approval, as HR would raise it. */
function raiseException(
  mock: MockService,
  n: number,
  fields: { employeeId: string; startDate: string; endDate?: string; halfDay?: 'FirstHalf' | 'SecondHalf' },
): string {
  const id = `00000e8c-0000-4000-8000-${(0x7000 + n).toString(16).padStart(12, '0')}`;
  mock.state.exceptions.push({
    id,
    endDate: fields.startDate,
    ...fields,
    type: 'ExcusedAbsence',
    isPaid: true,
    status: 'Pending',
    requiresApproval: false,
    createdByName: 'Helen Ruiz',
    created: '2026-06-01T09:00:00.000Z',
  });
  return id;
}

describe('spec "Attendance exception": "an excused employee is never Absent or Late"', () => {
  it('gives Excused from the exception first; needsReview exactly for a clock-in on a fully excused day', async () => {
    const mock = await mockOn('2026-06-15');
    const [ada, tunde, chioma, kwame] = mock.state.employees as [
      (typeof mock.state.employees)[0],
      (typeof mock.state.employees)[0],
      (typeof mock.state.employees)[0],
      (typeof mock.state.employees)[0],
    ];
    const day = '2026-05-13'; // before the fixtures' ten working days of history: no record yet for anyone
    // The two cases: a SecondHalf excused absence with a 09:20 clock-in, a whole day with 10:15.
    await mock.approveException(
      raiseException(mock, 1, { employeeId: ada.id, startDate: day, halfDay: 'SecondHalf' }),
    );
    await mock.approveException(raiseException(mock, 2, { employeeId: tunde.id, startDate: day }));
    // A clock-in in the non-excused half: the afternoon of a FirstHalf excuse.
    await mock.approveException(
      raiseException(mock, 3, { employeeId: chioma.id, startDate: day, halfDay: 'FirstHalf' }),
    );
    clockIn(mock.state, ada, day, '09:20:00', '17:00:00');
    clockIn(mock.state, tunde, day, '10:15:00', '17:00:00');
    clockIn(mock.state, chioma, day, '13:05:00', '17:00:00');
    clockIn(mock.state, kwame, day, '09:20:00', '17:00:00'); // not excused: Late, as before

    expect(await recordOf(mock, ada.id, day)).toMatchObject({
      status: 'Excused',
      excusedHalfDay: 'SecondHalf',
      excuseType: 'ExcusedAbsence',
      clockInTime: '09:20:00',
      needsReview: false,
    });
    expect(await recordOf(mock, tunde.id, day)).toMatchObject({ status: 'Excused', needsReview: true });
    expect(await recordOf(mock, tunde.id, day)).not.toHaveProperty('excusedHalfDay');
    expect(await recordOf(mock, chioma.id, day)).toMatchObject({
      status: 'Excused',
      excusedHalfDay: 'FirstHalf',
      needsReview: false,
    });
    expect(await recordOf(mock, kwame.id, day)).toMatchObject({ status: 'Late', needsReview: false });
    const review = await get(mock, `/v1/attendance/list?NeedsReview=true&StartDate=${day}&EndDate=${day}`);
    expect(review.data.map((r: { employeeId: string }) => r.employeeId)).toEqual([tunde.id]);

    // No clock-in at all on an excused day: the report writes Excused, never Absent.
    const [amara] = mock.state.employees.slice(4);
    await mock.approveException(raiseException(mock, 4, { employeeId: amara!.id, startDate: day }));
    await mock.completeAbsenceReport(day);
    expect(await recordOf(mock, amara!.id, day)).toMatchObject({ status: 'Excused', needsReview: false });
  });
});

describe('spec "Attendance exception": "Only exceptions with status Approved change attendance"', () => {
  it('approving one updates every record it covers and sends attendance.exception.approved', async () => {
    const mock = await mockOn('2026-06-15');
    const handled = await subscribeReceiver(mock);
    // An employee with an Absent day and a clocked-in day among the reported days, neither excused yet.
    const absent = (await get(mock, '/v1/attendance/list?Status=Absent&PageSize=100')).data.find(
      (r: { employeeId: string; attendanceDate: string }) =>
        !mock.state.exceptions.some((e) => e.employeeId === r.employeeId && e.status === 'Approved'),
    );
    const worked = (
      await get(mock, `/v1/attendance/list?EmployeeId=${absent.employeeId}&PageSize=100`)
    ).data.find(
      (r: { clockInTime?: string; attendanceDate: string }) =>
        r.clockInTime !== undefined && r.attendanceDate < '2026-06-15',
    );
    const [start, end] = [absent.attendanceDate, worked.attendanceDate].sort() as [string, string];
    const whole = raiseException(mock, 10, { employeeId: absent.employeeId, startDate: start, endDate: end });
    const reportBefore = mock.state.reports.find((r) => r.reportDate === absent.attendanceDate)!;
    expect(await recordOf(mock, absent.employeeId, absent.attendanceDate)).toMatchObject({
      status: 'Absent',
    });

    const { event } = await mock.approveException(whole);

    expect(await recordOf(mock, absent.employeeId, absent.attendanceDate)).toMatchObject({
      status: 'Excused',
      attendanceExceptionId: whole,
      excuseType: 'ExcusedAbsence',
      needsReview: false,
    });
    expect(await recordOf(mock, absent.employeeId, worked.attendanceDate)).toMatchObject({
      status: 'Excused',
      attendanceExceptionId: whole,
      needsReview: true, // clocked in on a fully excused day
    });
    // The report's counts are still "employees with each status".
    const report = await get(mock, `/v1/attendance/report/${reportBefore.reportId}`);
    expect(report.absentCount).toBe(reportBefore.absentCount - 1);
    expect(report.excusedCount).toBe(reportBefore.excusedCount + 1);
    expect(handled.map((e) => [e.type, e.id])).toEqual([['attendance.exception.approved', event.id]]);
    expect(handled[0]!.data).toMatchObject({
      exceptionId: whole,
      employeeId: absent.employeeId,
      status: 'Approved',
    });

    // A half day sets excusedHalfDay on the record it covers.
    const other = (await get(mock, '/v1/attendance/list?Status=Present&PageSize=100')).data.find(
      (r: { employeeId: string; attendanceDate: string }) =>
        !mock.state.exceptions.some(
          (e) =>
            e.employeeId === r.employeeId && e.startDate <= r.attendanceDate && e.endDate >= r.attendanceDate,
        ),
    );
    const half = raiseException(mock, 11, {
      employeeId: other.employeeId,
      startDate: other.attendanceDate,
      halfDay: 'FirstHalf',
    });
    await mock.approveException(half);
    expect(await recordOf(mock, other.employeeId, other.attendanceDate)).toMatchObject({
      status: 'Excused',
      attendanceExceptionId: half,
      excusedHalfDay: 'FirstHalf',
      needsReview: false,
    });
  });
});

describe('spec "Leave request" days: "weekends, the employee\'s days off and holidays are not counted"', () => {
  it("leaves out a part-timer's day off as well as the weekend and a holiday", async () => {
    const mock = await mockOn('2026-06-01');
    const grace = mock.state.employees.find((e) => e.firstName === 'Grace')!; // London, Fridays off
    const sam = mock.state.employees.find((e) => e.firstName === 'Sam')!; // Lagos, Wednesdays off
    expect([grace.daysOff, sam.daysOff]).toEqual([['Friday'], ['Wednesday']]);
    const annual = mock.state.leaveTypes[0]!.id;
    const pending = async (employeeId: string) =>
      (await get(mock, `/v1/leavebalance/get-leave-balance?EmployeeId=${employeeId}&LeaveTypeId=${annual}`))
        .leavePending;
    const daysOf = async (id: unknown) => (await get(mock, `/v1/leaverequest/details/${id}`)).days;
    const [gracePending, samPending] = [await pending(grace.id), await pending(sam.id)];
    // Mon 15 to Sun 21 June 2026, no holiday in London: Grace works Monday to Thursday.
    const a = await mock.requestLeave({
      employeeId: grace.id,
      leaveTypeId: annual,
      startDate: '2026-06-15',
      endDate: '2026-06-21',
    });
    // Mon 8 to Sun 14 June 2026: Sam is off on Wednesday, and Friday 12 June is Founders' Day.
    const b = await mock.requestLeave({
      employeeId: sam.id,
      leaveTypeId: annual,
      startDate: '2026-06-08',
      endDate: '2026-06-14',
    });
    expect(await daysOf(a.event.data.leaveRequestId)).toBe(4);
    expect(await daysOf(b.event.data.leaveRequestId)).toBe(3); // Monday, Tuesday, Thursday
    // The balance counts the same days.
    expect([await pending(grace.id), await pending(sam.id)]).toEqual([gracePending + 4, samPending + 3]);
  });
});

describe('spec "Leave balance": in agreement with the leave list', () => {
  it('counts approved, undecided and rejected requests; rule 1 only without any request of the type', async () => {
    const mock = await mockOn('2026-06-15');
    const list = (await get(mock, '/v1/leaverequest/list?PageSize=100')).data as {
      id: string;
      employeeId: string;
      leaveTypeName: string;
      startDate: string;
      days: number;
      leaveStatusId: number;
    }[];
    const balanceOf = (employeeId: string, leaveTypeId: string) =>
      get(mock, `/v1/leavebalance/get-leave-balance?EmployeeId=${employeeId}&LeaveTypeId=${leaveTypeId}`);
    // An approved sick request: its days are taken, though nobody set up a sick balance (the old rule-1 answer
    // said nothing was taken).
    const sick = mock.state.leaveTypes.find((t) => t.name === 'Sick Leave')!;
    const approvedSick = list.find((r) => r.leaveTypeName === 'Sick Leave' && r.leaveStatusId === 2)!;
    const mine = list.filter(
      (r) => r.employeeId === approvedSick.employeeId && r.leaveTypeName === 'Sick Leave',
    );
    const sum = (...statuses: number[]) =>
      mine.filter((r) => statuses.includes(r.leaveStatusId)).reduce((n, r) => n + r.days, 0);
    expect(await balanceOf(approvedSick.employeeId, sick.id)).toEqual({
      totalDays: 10,
      daysTaken: sum(2),
      daysRemaining: 10 - sum(2),
      leavePending: sum(0, 1),
      leaveRejected: sum(3),
    });
    expect(sum(2)).toBeGreaterThan(0);
    // Rule 1: Sabbatical, which nobody ever asked for.
    const sabbatical = mock.state.leaveTypes.find((t) => t.name === 'Sabbatical')!;
    expect(await balanceOf(approvedSick.employeeId, sabbatical.id)).toEqual({
      totalDays: 30,
      daysTaken: 0,
      daysRemaining: 30,
      leavePending: 0,
      leaveRejected: 0,
    });
    // Deciding moves the days from one count to the other.
    const annual = mock.state.leaveTypes[0]!.id;
    const ada = mock.state.employees[0]!;
    const before = await balanceOf(ada.id, annual);
    const { event } = await mock.requestLeave({
      employeeId: ada.id,
      leaveTypeId: annual,
      startDate: '2026-07-06',
      endDate: '2026-07-08',
    });
    const id = event.data.leaveRequestId as string;
    expect((await balanceOf(ada.id, annual)).leavePending).toBe(before.leavePending + 3);
    await mock.approveLeave(id);
    expect(await balanceOf(ada.id, annual)).toMatchObject({
      daysTaken: before.daysTaken + 3,
      daysRemaining: before.daysRemaining - 3,
      leavePending: before.leavePending,
    });
  });

  it.each(['2026-01-10', '2026-06-15', '2026-12-31'])(
    "never has a fixture request requested after the mock's today (%s)",
    async (today) => {
      const mock = await mockOn(today);
      const list = (await get(mock, '/v1/leaverequest/list?PageSize=100')).data as { requestedOn: string }[];
      expect(list.length).toBeGreaterThan(0);
      expect(list.filter((r) => r.requestedOn.slice(0, 10) >= today)).toEqual([]);
    },
  );
});

describe('spec "Absence report": "isWorkDay: false when the day was not a working day"', () => {
  it('is false on a public holiday and on a company holiday, not only at weekends', async () => {
    // Monday 4 January 2027: the history holds Christmas (public, both countries) and New Year's Day.
    const mock = await mockOn('2027-01-04');
    const reportOn = (date: string) => mock.state.reports.find((r) => r.reportDate === date)!;
    for (const date of ['2026-12-25', '2027-01-01']) {
      const report = await get(mock, `/v1/attendance/report/${reportOn(date).reportId}`);
      expect(report, date).toMatchObject({ isWorkDay: false, absentCount: 0, presentCount: 0, lateCount: 0 });
      expect(report.holidayCount, date).toBeGreaterThan(0);
    }
    // Founders' Day, the organisation's own recurring holiday (Friday 12 June 2026).
    const june = await mockOn('2026-06-15');
    const founders = june.state.reports.find((r) => r.reportDate === '2026-06-12')!;
    expect(await get(june, `/v1/attendance/report/${founders.reportId}`)).toMatchObject({ isWorkDay: false });
    // A holiday of one company only: the other company worked, so the organisation's day was a working day.
    const officeMove = june.state.holidays.find((h) => h.name === 'Office move')!;
    const move = await get(
      june,
      `/v1/attendance/report/${june.state.reports.find((r) => r.reportDate === officeMove.date)!.reportId}`,
    );
    expect(move).toMatchObject({ isWorkDay: true });
    expect(move.holidayCount).toBeGreaterThan(0);
    // And at a weekend.
    await june.completeAbsenceReport('2026-06-13');
    expect(june.state.reports.at(-1)).toMatchObject({ isWorkDay: false, absentCount: 0 });
  });
});

describe('spec "Events": "blocking days on leave.approved and freeing them on leave.cancelled"', () => {
  it('sends every leave event the spec names, and cancels approved leave', async () => {
    const mock = await mockOn('2026-06-15');
    const handled = await subscribeReceiver(mock);
    const [ada, tunde] = mock.state.employees as [
      (typeof mock.state.employees)[0],
      (typeof mock.state.employees)[0],
    ];
    const annual = mock.state.leaveTypes[0]!.id;
    const first = await mock.requestLeave({
      employeeId: ada.id,
      leaveTypeId: annual,
      startDate: '2026-07-06',
      endDate: '2026-07-10',
      comments: 'Holiday',
    });
    const second = await mock.requestLeave({
      employeeId: tunde.id,
      leaveTypeId: annual,
      startDate: '2026-07-13',
    });
    const [a, b] = [first.event.data.leaveRequestId as string, second.event.data.leaveRequestId as string];
    await mock.approveLeave(a);
    await mock.rejectLeave(b);
    const taken = (
      await get(mock, `/v1/leavebalance/get-leave-balance?EmployeeId=${ada.id}&LeaveTypeId=${annual}`)
    ).daysTaken;
    await mock.cancelLeave(a);
    expect(handled.map((e) => e.type)).toEqual([
      'leave.requested',
      'leave.requested',
      'leave.approved',
      'leave.rejected',
      'leave.cancelled',
    ]);
    expect(handled.map((e) => (e.data as { status: string }).status)).toEqual([
      'Submitted',
      'Submitted',
      'Approved',
      'Rejected',
      'Abandoned',
    ]);
    expect(handled[4]!.data).toMatchObject({
      leaveRequestId: a,
      employeeId: ada.id,
      leaveTypeId: annual,
      startDate: '2026-07-06T00:00:00',
      endDate: '2026-07-10T00:00:00',
    });
    expect(await get(mock, `/v1/leaverequest/details/${a}`)).toMatchObject({
      leaveStatus: 'Abandoned',
      leaveStatusId: 4,
      days: 5,
      comments: 'Holiday',
    });
    // The days are freed.
    expect(
      (await get(mock, `/v1/leavebalance/get-leave-balance?EmployeeId=${ada.id}&LeaveTypeId=${annual}`))
        .daysTaken,
    ).toBe(taken - 5);
    await expect(mock.cancelLeave(b)).rejects.toThrow(/already decided/);
    await expect(mock.cancelLeave(a)).rejects.toThrow(/already decided/);
  });

  it('cancelling approved leave that has begun gives its reported days back their attendance', async () => {
    const mock = await mockOn('2026-06-15');
    const absent = (await get(mock, '/v1/attendance/list?Status=Absent')).data[0];
    const { event } = await mock.requestLeave({
      employeeId: absent.employeeId,
      leaveTypeId: mock.state.leaveTypes[0]!.id,
      startDate: absent.attendanceDate,
    });
    const id = event.data.leaveRequestId as string;
    await mock.approveLeave(id);
    expect(await recordOf(mock, absent.employeeId, absent.attendanceDate)).toMatchObject({ status: 'Leave' });
    await mock.cancelLeave(id);
    expect(await recordOf(mock, absent.employeeId, absent.attendanceDate)).toMatchObject({
      status: 'Absent',
    });
  });
});

describe('spec "Company holiday": "isRecurring: repeats on the same day every year", Feb 29 included', () => {
  it('puts a recurring Feb 29 on Feb 28 in a common year, and counts it there', async () => {
    const mock = await mockOn('2029-01-15');
    const leapDay = (await get(mock, '/v1/attendance/holidays?Year=2029')).find(
      (h: { name: string }) => h.name === 'Leap Day',
    );
    expect(leapDay).toMatchObject({ date: '2028-02-29', occursOn: '2029-02-28', isRecurring: true });
    expect(
      (await get(mock, '/v1/attendance/holidays?Year=2032')).find(
        (h: { name: string }) => h.name === 'Leap Day',
      ),
    ).toMatchObject({ occursOn: '2032-02-29' });
    // A London employee's leave over Wednesday 28 February 2029 does not count it.
    const oliver = mock.state.employees.find((e) => e.firstName === 'Oliver')!;
    const { event } = await mock.requestLeave({
      employeeId: oliver.id,
      leaveTypeId: mock.state.leaveTypes[0]!.id,
      startDate: '2029-02-26',
      endDate: '2029-03-02',
    });
    expect((await get(mock, `/v1/leaverequest/details/${event.data.leaveRequestId}`)).days).toBe(4);
  });

  it('refuses `mock --today 2026-02-30` and createMockService({ today: "2026-02-30" }) with a clear message', async () => {
    const io = {
      out: '',
      err: '',
      stdout() {},
      stderr(text: string) {
        io.err += text;
      },
      stdin: async () => new Uint8Array(),
    };
    expect(await runCli(['mock', '--port', '0', '--today', '2026-02-30'], io as unknown as CliIo)).toBe(2);
    expect(io.err).toBe(
      'workforce-webhooks: error: --today 2026-02-30 is not a real day; give one written YYYY-MM-DD (see workforce-webhooks mock --help)\n',
    );
    await expect(createMockService({ today: '2026-02-30' })).rejects.toThrow(
      'workforce-webhooks mock: today "2026-02-30" is not a real day written YYYY-MM-DD',
    );
  });
});
