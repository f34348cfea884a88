// Parameters the spec does not allow are refused before any request, and sent under the spec's names.
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import {
  type ApiClient,
  type AttendanceListParams,
  type AttendanceStatusId,
  type AttendanceStatusName,
  createApiClient,
  type ExceptionListParams,
  InvalidParameterError,
  type LeaveRequestListParams,
  type Weekday,
} from 'workforce-webhooks/api';
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
      () => api.attendance.listRecords({ applicableDay: 'Someday' as never }),
      'ApplicableDay',
    ],
    ['a missing balance parameter', () => api.leave.getBalance({ employeeId: uuid } as never), 'LeaveTypeId'],
    ['an unknown parameter', () => api.leave.listRequests({ status: 'Approved' } as never), 'status'],
    // Spec "Leave status" and "Attendance status": the filters accept the table's names or numbers, nothing else.
    [
      'a leave status name in the wrong case',
      () => api.leave.listRequests({ leaveStatus: 'approved' as never }),
      'LeaveStatus',
    ],
    [
      'a leave status number as text',
      () => api.leave.listRequests({ leaveStatus: '2' as never }),
      'LeaveStatus',
    ],
    ['an attendance status of 99', () => api.attendance.listRecords({ status: 99 as never }), 'Status'],
    ['a fractional status', () => api.attendance.listRecords({ status: 1.5 as never }), 'Status'],
    ['a work mode of 3', () => api.attendance.listRecords({ workMode: 3 as never }), 'WorkMode'],
    [
      'an exception type name in lower case',
      () => api.attendance.listExceptions({ type: 'remoteday' as never }),
      'Type',
    ],
    [
      'eligibility criteria of 5',
      () => api.leave.listTypes({ eligibilityCriteria: 5 as never }),
      'EligibilityCriteria',
    ],
    ['orderBy of 2', () => api.leave.listRequests({ orderBy: 2 as never }), 'OrderBy'],
    [
      'a weekday in lower case',
      () => api.attendance.listRecords({ applicableDay: 'monday' as never }),
      'ApplicableDay',
    ],
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

describe('the tables as types', () => {
  it('says which name was meant', async () => {
    const error = await api.leave.listRequests({ leaveStatus: 'approved' as never }).catch((e: unknown) => e);
    expect((error as Error).message).toContain('did you mean "Approved"?');
  });

  it('types the numeric forms as their unions, so a number outside the table does not compile', () => {
    expectTypeOf<NonNullable<AttendanceListParams['status']>>().toEqualTypeOf<
      AttendanceStatusName | AttendanceStatusId
    >();
    expectTypeOf<AttendanceStatusId>().toEqualTypeOf<0 | 1 | 2 | 3 | 4 | 5>();
    expectTypeOf<NonNullable<AttendanceListParams['applicableDay']>>().toEqualTypeOf<Weekday>();
    const typed = (): unknown[] => [
      // @ts-expect-error 99 is not an attendance status
      { status: 99 } satisfies AttendanceListParams,
      // @ts-expect-error names are case-sensitive
      { leaveStatus: 'approved' } satisfies LeaveRequestListParams,
      // @ts-expect-error exception statuses are 1 to 4
      { status: 0 } satisfies ExceptionListParams,
      // @ts-expect-error work modes are 0 to 2
      { workMode: 3 } satisfies AttendanceListParams,
      { status: 5, workMode: 'Hybrid', applicableDay: 'Friday' } satisfies AttendanceListParams,
    ];
    expect(typed).toBeTypeOf('function');
  });
});
