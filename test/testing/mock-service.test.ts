// The mock's read API checked against the spec's tables with plain fetch: envelope, defaults, filters, keys, limits.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMockService, type MockService } from 'workforce-webhooks/testing';

let mock: MockService;
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
