// The mock's read API checked against the spec's tables with plain fetch: envelope, defaults, filters, keys, limits.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMockService, type MockService } from 'workforce-webhooks/testing';

let mock: MockService;
const weekdayOf = (date: string) => new Date(`${date}T00:00:00Z`).toUTCString();
let clock = Date.parse('2026-06-15T12:00:00Z');
const get = async (path: string, key: string | null = mock.apiKeys.full) => {
  const response = await fetch(`${mock.baseUrl}${path}`, {
    headers: key === null ? {} : { authorization: `Bearer ${key}` },
  });
  return {
    status: response.status,
    headers: response.headers,
    // biome-ignore lint/suspicious/noExplicitAny: raw JSON, checked field by field against the spec
    body: (await response.json()) as any,
  };
};

beforeAll(async () => {
  mock = await createMockService({ today: '2026-06-15', now: () => clock });
});
afterAll(() => mock.close());

describe('envelope and paging (spec "Response envelope", "Limits")', () => {
  it('wraps success as isSuccessful true, code 00, message Success', async () => {
    const { status, body } = await get('/v1/leavetype/list');
    expect(status).toBe(200);
    expect(body).toMatchObject({ isSuccessful: true, code: '00', message: 'Success' });
    expect(Object.keys(body.data).sort()).toEqual([
      'data',
      'pageNumber',
      'pageSize',
      'totalPages',
      'totalRecords',
    ]);
  });

  it.each([
    ['/v1/leaverequest/list', 25],
    ['/v1/leavetype/list', 25],
    ['/v1/attendance/list', 10],
    ['/v1/attendance/exceptions', 20],
  ])('%s pages by %i by default', async (path, size) => {
    const { body } = await get(path);
    expect(body.data.pageSize).toBe(size);
    expect(body.data.pageNumber).toBe(1);
    expect(body.data.data.length).toBe(Math.min(size, body.data.totalRecords));
    expect(body.data.totalPages).toBe(Math.ceil(body.data.totalRecords / size));
  });

  it('refuses an exceptions PageSize over 100 and accepts 100', async () => {
    expect((await get('/v1/attendance/exceptions?PageSize=101')).body.isSuccessful).toBe(false);
    expect((await get('/v1/attendance/exceptions?PageSize=100')).body.data.pageSize).toBe(100);
  });

  it('returns unpaged holiday lists as arrays in data', async () => {
    expect(Array.isArray((await get('/v1/attendance/holidays')).body.data)).toBe(true);
    expect(Array.isArray((await get('/v1/attendance/holidays/public')).body.data)).toBe(true);
  });
});

describe('records as the spec writes them', () => {
  it('writes leave dates as YYYY-MM-DDT00:00:00 with no zone, and the list-item fields', async () => {
    const item = (await get('/v1/leaverequest/list?PageSize=1')).body.data.data[0];
    expect(item.startDate).toMatch(/^\d{4}-\d{2}-\d{2}T00:00:00$/);
    expect(Object.keys(item).sort()).toEqual([
      'comments',
      'days',
      'employeeId',
      'employeeName',
      'endDate',
      'id',
      'leaveStatus',
      'leaveStatusId',
      'leaveTypeName',
      'requestedOn',
      'startDate',
    ]);
  });

  it('gives details with documents (storage 0 link, 1 private) and relievers', async () => {
    const sick = mock.state.leaveRequests.find((r) => r.documents.length > 0)!;
    const { body } = await get(`/v1/leaverequest/details/${sick.id}`);
    expect(body.data.documents.map((d: { storage: number }) => d.storage)).toEqual([0, 1]);
    expect(body.data.relievers[0]).toEqual({
      id: expect.any(String),
      fullName: expect.any(String),
      email: expect.stringContaining('@'),
    });
    expect(['Remote', 'Onsite', 'Hybrid']).toContain(body.data.workMode);
  });

  it('answers an absence report with counts that add up', async () => {
    const report = mock.state.reports[0]!;
    const { body } = await get(`/v1/attendance/report/${report.reportId}`);
    const r = body.data;
    expect(r.status).toBe('Completed');
    expect(r.excusedAbsenceCount).toBe(r.leaveCount + r.holidayCount + r.excusedCount);
    expect(r.unexcusedAbsenceCount).toBe(r.absentCount);
    expect(r).not.toHaveProperty('organizationId');
  });

  it("lists a recurring holiday on its date in the requested year and drops other years' one-offs", async () => {
    const { body } = await get('/v1/attendance/holidays?Year=2030');
    const founders = body.data.find((h: { name: string }) => h.name === "Founders' Day");
    expect(founders).toMatchObject({ date: '2023-06-12', occursOn: '2030-06-12', isRecurring: true });
    expect(founders).not.toHaveProperty('companyId');
    expect(body.data.map((h: { name: string }) => h.name)).not.toContain('Census day');
  });
});

describe('field names of every resource, as the spec tables list them', () => {
  // Required fields, then fields the spec marks as missing when there is nothing to say.
  const resources: [string, () => Promise<unknown>, string[], string[]][] = [
    [
      'leave request (details)',
      async () => (await get(`/v1/leaverequest/details/${mock.state.leaveRequests[0]!.id}`)).body.data,
      [
        'id',
        'employeeId',
        'employeeName',
        'leaveTypeName',
        'startDate',
        'endDate',
        'days',
        'leaveStatusId',
        'leaveStatus',
        'comments',
        'requestedOn',
        'firstName',
        'lastName',
        'workMode',
        'jobRoles',
        'department',
        'documents',
        'relievers',
        'handoffNote',
      ],
      [],
    ],
    [
      'leave balance',
      async () =>
        (
          await get(
            `/v1/leavebalance/get-leave-balance?EmployeeId=${mock.state.employees[0]!.id}&LeaveTypeId=${mock.state.leaveTypes[0]!.id}`,
          )
        ).body.data,
      ['totalDays', 'daysTaken', 'daysRemaining', 'leavePending', 'leaveRejected'],
      [],
    ],
    [
      'leave type',
      async () => (await get('/v1/leavetype/list')).body.data.data[0],
      [
        'id',
        'name',
        'description',
        'maxLeaveDays',
        'carryForward',
        'eligibilityCriteria',
        'requiresDocument',
        'requiredDocument',
        'isActive',
        'created',
        'lastModified',
      ],
      [],
    ],
    [
      'attendance record',
      async () => (await get('/v1/attendance/list?PageSize=500')).body.data.data,
      [
        'id',
        'employeeId',
        'firstName',
        'lastName',
        'email',
        'department',
        'role',
        'company',
        'attendanceDate',
        'applicableDay',
        'trackingMethod',
        'status',
        'totalWorkedHours',
        'workmode',
        'needsReview',
      ],
      ['clockInTime', 'clockOutTime', 'location', 'attendanceExceptionId', 'excuseType', 'excusedHalfDay'],
    ],
    [
      'absence report',
      async () => (await get(`/v1/attendance/report/${mock.state.reports[0]!.reportId}`)).body.data,
      [
        'reportId',
        'reportDate',
        'status',
        'isWorkDay',
        'completedAt',
        'totalEmployeesProcessed',
        'presentCount',
        'lateCount',
        'absentCount',
        'leaveCount',
        'holidayCount',
        'excusedCount',
        'excusedAbsenceCount',
        'unexcusedAbsenceCount',
      ],
      [],
    ],
    [
      'attendance exception',
      async () => (await get('/v1/attendance/exceptions?PageSize=100')).body.data.data,
      [
        'id',
        'employeeId',
        'employeeName',
        'companyId',
        'startDate',
        'endDate',
        'days',
        'type',
        'isPaid',
        'status',
        'requiresApproval',
        'createdByName',
        'created',
        'canCancel',
      ],
      ['halfDay', 'batchId', 'approvedByName', 'approvedAt', 'rejectedAt', 'cancelledAt'],
    ],
    [
      'company holiday',
      async () => (await get('/v1/attendance/holidays')).body.data,
      ['id', 'name', 'date', 'occursOn', 'isRecurring'],
      ['companyId', 'companyName'],
    ],
    [
      'public holiday',
      async () => (await get('/v1/attendance/holidays/public')).body.data,
      ['name', 'startDate', 'endDate', 'countryId', 'countryName'],
      [],
    ],
  ];
  it.each(resources)('%s', async (_, fetchRecords, required, optional) => {
    const found = await fetchRecords();
    const records = (Array.isArray(found) ? found : [found]) as Record<string, unknown>[];
    expect(records.length).toBeGreaterThan(0);
    for (const record of records) {
      for (const field of required) expect(record, field).toHaveProperty(field);
      for (const field of Object.keys(record)) expect([...required, ...optional]).toContain(field);
    }
    if (optional.length > 0) {
      const seen = new Set(records.flatMap((r) => Object.keys(r)));
      expect(
        optional.filter((field) => !seen.has(field)),
        'optional fields the fixtures never show',
      ).toEqual([]);
    }
  });
});

describe('keys: organisation and permission (spec "Authentication")', () => {
  it('refuses a missing or unknown key with isSuccessful false', async () => {
    for (const key of [null, 'nope']) {
      const { status, body } = await get('/v1/leavetype/list', key);
      expect(status).toBe(401);
      expect(body.isSuccessful).toBe(false);
    }
  });

  it('needs Leave: View for leave and Attendance: View for attendance', async () => {
    expect((await get('/v1/leavetype/list', mock.apiKeys.attendance)).status).toBe(403);
    expect((await get('/v1/attendance/list', mock.apiKeys.leave)).status).toBe(403);
    expect((await get('/v1/attendance/exceptions', mock.apiKeys.people)).status).toBe(403);
    expect((await get('/v1/leavetype/list', mock.apiKeys.leave)).status).toBe(200);
    expect((await get('/v1/attendance/exceptions', mock.apiKeys.attendance)).status).toBe(200);
  });

  it('keeps each key to its own organisation (balance rule 2, exception outside the organisation)', async () => {
    const mine = mock.state.exceptions.find((e) => e.employeeId === mock.state.employees[0]!.id)!;
    expect((await get(`/v1/attendance/exceptions/${mine.id}`)).body.isSuccessful).toBe(true);
    expect(
      (await get(`/v1/attendance/exceptions/${mine.id}`, mock.apiKeys.otherOrganization)).body.isSuccessful,
    ).toBe(false);
    const [employee, type] = [mock.state.employees[0]!.id, mock.state.leaveTypes[0]!.id];
    const query = `/v1/leavebalance/get-leave-balance?EmployeeId=${employee}&LeaveTypeId=${type}`;
    expect((await get(query)).body.isSuccessful).toBe(true);
    expect((await get(query, mock.apiKeys.otherOrganization)).body).toMatchObject({
      isSuccessful: false,
      data: null,
    });
    const theirs = (await get('/v1/leaverequest/list', mock.apiKeys.otherOrganization)).body.data;
    expect(theirs.totalRecords).toBe(1);
  });
});

describe('rate limit (spec "Limits": 300 a minute per key, Retry-After)', () => {
  it('answers the 301st request of a minute with Retry-After, per key, and lets it through a minute later', async () => {
    const local = await createMockService({ today: '2026-06-15', now: () => clock });
    try {
      const call = (key: string) =>
        fetch(`${local.baseUrl}/v1/leavetype/list`, { headers: { authorization: `Bearer ${key}` } });
      for (let i = 0; i < 300; i++) expect((await call(local.apiKeys.full)).status).toBe(200);
      const limited = await call(local.apiKeys.full);
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBe(60);
      expect(await limited.json()).toMatchObject({ isSuccessful: false, code: 'rate_limited' });
      expect((await call(local.apiKeys.leave)).status).toBe(200);
      clock += 30_000;
      expect((await call(local.apiKeys.full)).headers.get('retry-after')).toBe('30');
      clock += 30_000;
      expect((await call(local.apiKeys.full)).status).toBe(200);
    } finally {
      await local.close();
    }
  });
});

describe('fixtures around any today', () => {
  it.each(['2026-01-01', '2026-01-03', '2027-12-31', '2028-02-29'])(
    'builds ten finished days and runs the report of %s',
    async (today) => {
      const local = await createMockService({ today });
      try {
        expect(local.state.reports).toHaveLength(10);
        // Ten weekdays before today (isWorkDay is checked day by day in mock-service-fixture.test.ts).
        expect(
          local.state.reports.every(
            (r) => r.reportDate < today && !/^Sat|^Sun/.test(weekdayOf(r.reportDate)),
          ),
        ).toBe(true);
        const { event } = await local.completeAbsenceReport();
        const report = local.state.reports.at(-1)!;
        expect(event.data).toEqual({ reportId: report.reportId, reportDate: today });
        expect(report.totalEmployeesProcessed).toBe(8);
      } finally {
        await local.close();
      }
    },
  );
});
