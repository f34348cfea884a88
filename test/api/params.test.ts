// Parameters the spec does not allow are refused before any request, and sent under the spec's names.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiClient, createApiClient, InvalidParameterError } from 'workforce-webhooks/api';
import { createMockService, type MockService } from 'workforce-webhooks/testing';

let mock: MockService;
let api: ApiClient;
const sent: URL[] = [];

beforeAll(async () => {
  mock = await createMockService({ today: '2026-06-15' });
  // The real fetch, recording what went out.
  const recording: typeof fetch = (input, init) => {
    sent.push(new URL(String(input)));
    return fetch(input, init);
  };
  api = createApiClient({ apiKey: mock.apiKeys.full, baseUrl: mock.baseUrl, fetch: recording });
});
afterAll(() => mock.close());

describe('refused before any request', () => {
  const uuid = '00000000-0000-4000-8000-000000000001';
  it.each([
    ['only StartDate', () => api.leave.listRequests({ startDate: '2026-01-01' }), 'EndDate'],
    ['only EndDate', () => api.leave.listRequests({ endDate: '2026-01-01' }), 'StartDate'],
    ['exceptions PageSize over 100', () => api.attendance.listExceptions({ pageSize: 101 }), 'PageSize'],
    ['a malformed uuid', () => api.leave.listRequests({ companyId: 'acme' }), 'CompanyId'],
    ['a malformed id', () => api.leave.getRequest('123'), 'id'],
    ['an impossible date', () => api.attendance.listRecords({ startDate: '2026-02-30' }), 'StartDate'],
    ['a date with a time', () => api.attendance.listExceptions({ from: '2026-02-01T10:00:00Z' }), 'From'],
    ['an unknown status', () => api.leave.listRequests({ leaveStatus: 'Done' as never }), 'LeaveStatus'],
    [
      'a status number out of the table',
      () => api.attendance.listExceptions({ status: 0 as never }),
      'Status',
    ],
    ['a page number of 0', () => api.leave.listTypes({ pageNumber: 0 }), 'PageNumber'],
    [
      'a weekday that is not one',
      () => api.attendance.listRecords({ applicableDay: 'Someday' }),
      'ApplicableDay',
    ],
    ['a missing balance parameter', () => api.leave.getBalance({ employeeId: uuid } as never), 'LeaveTypeId'],
    ['an unknown parameter', () => api.leave.listRequests({ status: 'Approved' } as never), 'status'],
  ])('%s', async (_, call, parameter) => {
    const before = sent.length;
    const error = await call().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidParameterError);
    expect((error as InvalidParameterError).parameter).toBe(parameter);
    expect((error as Error).message).toMatch(/^workforce-webhooks: invalid parameter /);
    expect(sent.length).toBe(before);
  });
});

describe('sent under the spec names', () => {
  it('maps camelCase to the exact query names', async () => {
    const uuid = mock.state.companies[0]!.id;
    await api.leave.listRequests({
      pageNumber: 1,
      pageSize: 5,
      companyId: uuid,
      leaveStatus: 'Approved',
      startDate: '2026-01-01',
      endDate: '2026-12-31',
      searchTerm: 'a',
      orderBy: 0,
    });
    expect(sent.at(-1)!.pathname).toBe('/v1/leaverequest/list');
    expect([...sent.at(-1)!.searchParams.keys()]).toEqual([
      'PageNumber',
      'PageSize',
      'CompanyId',
      'LeaveStatus',
      'StartDate',
      'EndDate',
      'SearchTerm',
      'OrderBy',
    ]);
    await api.attendance.listRecords({
      department: uuid,
      unit: uuid,
      workMode: 0,
      needsReview: false,
      applicableDay: 'Monday',
    });
    expect(sent.at(-1)!.search).toBe(
      `?Department=${uuid}&Unit=${uuid}&WorkMode=0&ApplicableDay=Monday&NeedsReview=false`,
    );
    await api.attendance.listExceptions({
      from: '2026-01-01',
      to: '2026-01-31',
      batchId: uuid,
      search: 'x',
      type: 'RemoteDay',
    });
    expect(sent.at(-1)!.search).toBe(
      `?From=2026-01-01&To=2026-01-31&Type=RemoteDay&BatchId=${uuid}&Search=x`,
    );
    await api.attendance.listHolidays({ year: 2026, companyId: uuid });
    expect(sent.at(-1)!.search).toBe(`?Year=2026&CompanyId=${uuid}`);
    await api.leave.listTypes({ isActive: true, eligibilityCriteria: 0 });
    expect(sent.at(-1)!.search).toBe('?IsActive=true&EligibilityCriteria=0');
  });
});
