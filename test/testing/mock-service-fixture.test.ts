// The mock's whole fixture held to every rule the spec states, over every day of its data, around several todays.
import { afterEach, describe, expect, it } from 'vitest';
import { createMockService, type MockService } from 'workforce-webhooks/testing';
import { specViolations } from './spec-rules.js';

const open: MockService[] = [];
afterEach(async () => {
  for (const mock of open.splice(0)) await mock.close();
});

async function mockOn(today: string): Promise<MockService> {
  // The clock at noon of today, and no rate limit to speak of: the checker reads everything, more than once.
  const mock = await createMockService({
    today,
    now: () => Date.parse(`${today}T12:00:00Z`),
    rateLimit: 1e6,
  });
  open.push(mock);
  return mock;
}

describe('every stated rule over every day of the fixture', () => {
  it.each([
    ['2026-06-15', 'a Monday in June'],
    ['2026-01-02', 'the year turning, Christmas and New Year in the history'],
    ['2026-12-31', 'the year-end closure'],
    ['2028-02-29', 'a leap day'],
    ['2029-03-06', 'a recurring Feb 29 falling on Wednesday Feb 28'],
    ['2025-11-08', 'a Saturday'],
  ])('%s (%s)', async (today) => {
    const mock = await mockOn(today);
    expect(await specViolations(mock, today)).toEqual([]);
    // Not vacuous: the history has every status the rules decide between, a review, a half day, a day off work.
    const records = (
      await (
        await fetch(`${mock.baseUrl}/v1/attendance/list?PageSize=1000`, {
          headers: { authorization: `Bearer ${mock.apiKeys.full}` },
        })
      ).json()
    ).data.data as { status: string; needsReview: boolean; excusedHalfDay?: string }[];
    const statuses = new Set(records.map((r) => r.status));
    for (const status of ['Present', 'Late', 'Absent', 'Holiday', 'Excused'])
      expect(statuses).toContain(status);
    expect(records.some((r) => r.needsReview)).toBe(true);
    expect(records.some((r) => r.excusedHalfDay !== undefined)).toBe(true);
    expect(mock.state.reports.some((r) => !r.isWorkDay)).toBe(true);
  });

  it('still holds after every trigger: leave requested, approved, rejected, cancelled, exceptions approved, the day reported', async () => {
    const today = '2026-06-15';
    const mock = await mockOn(today);
    const [annual, sick] = [mock.state.leaveTypes[0]!.id, mock.state.leaveTypes[1]!.id];
    const ours = mock.state.employees.filter((e) => e.organizationId === mock.organizationId);
    // A week of leave for each employee, reaching back over reported days and forward past today.
    for (const [i, employee] of ours.entries()) {
      await mock.requestLeave({
        employeeId: employee.id,
        leaveTypeId: i % 2 === 0 ? annual : sick,
        startDate: i < 4 ? '2026-06-08' : '2026-06-22',
        endDate: i < 4 ? '2026-06-16' : '2026-06-26',
      });
    }
    const undecided = mock.state.leaveRequests.filter((r) => r.statusId === 0 || r.statusId === 1);
    for (const [i, request] of undecided.entries()) {
      if (i % 3 === 2) await mock.rejectLeave(request.id);
      else await mock.approveLeave(request.id);
    }
    const approved = mock.state.leaveRequests.filter((r) => r.statusId === 2);
    for (const request of approved.filter((_, i) => i % 2 === 0)) await mock.cancelLeave(request.id);
    for (const exception of mock.state.exceptions.filter(
      (e) => e.status === 'Pending' && ours.some((o) => o.id === e.employeeId),
    )) {
      await mock.approveException(exception.id);
    }
    await mock.completeAbsenceReport(today);
    await mock.completeAbsenceReport('2026-06-13'); // a Saturday
    expect(await specViolations(mock, today)).toEqual([]);
  });
});
