// The read-API client against the mock service: every endpoint, every filter, paging and the envelope.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ApiClient,
  ApiError,
  type AttendanceException,
  type AttendanceRecord,
  createApiClient,
} from 'workforce-webhooks/api';
import { createMockService, type MockService } from 'workforce-webhooks/testing';

let mock: MockService;
let api: ApiClient;
const ids = () => {
  const s = mock.state;
  return {
    lagos: s.companies[0]!.id,
    london: s.companies[1]!.id,
    engineering: s.departments[0]!.id,
    platform: s.departments[0]!.units[0]!.id,
    ada: s.employees[0]!,
    annual: s.leaveTypes[0]!.id,
    sick: s.leaveTypes[1]!.id,
  };
};
const all = async <T>(iterable: AsyncIterable<T>): Promise<T[]> => {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
};

beforeAll(async () => {
  mock = await createMockService({ today: '2026-06-15' });
  api = createApiClient({ apiKey: mock.apiKeys.full, baseUrl: mock.baseUrl });
});
afterAll(() => mock.close());

describe('api.leave', () => {
  it('lists requests a page at a time and iterates every one', async () => {
    const first = await api.leave.listRequests();
    expect(first).toMatchObject({ pageNumber: 1, pageSize: 25, totalRecords: 30, totalPages: 2 });
    const second = await api.leave.listRequests({ pageNumber: 2 });
    expect(second.data).toHaveLength(5);
    const every = await all(api.leave.iterateRequests({ pageSize: 7 }));
    expect(every).toHaveLength(30);
    expect(new Set(every.map((r) => r.id)).size).toBe(30);
  });

  it('filters by company, department, leave type, status (name or number), dates and search term', async () => {
    const { lagos, engineering, sick } = ids();
    const total = (await api.leave.listRequests()).totalRecords;
    const byCompany = await all(api.leave.iterateRequests({ companyId: lagos }));
    const lagosPeople = mock.state.employees.filter((e) => e.companyId === lagos).map((e) => e.id);
    expect(byCompany.length).toBeGreaterThan(0);
    expect(byCompany.length).toBeLessThan(total);
    expect(byCompany.every((r) => lagosPeople.includes(r.employeeId))).toBe(true);
    const engineers = mock.state.employees.filter((e) => e.departmentId === engineering).map((e) => e.id);
    const byDepartment = await all(api.leave.iterateRequests({ departmentId: engineering }));
    expect(byDepartment.length).toBeGreaterThan(0);
    expect(byDepartment.every((r) => engineers.includes(r.employeeId))).toBe(true);
    const byType = await all(api.leave.iterateRequests({ leaveTypeId: sick }));
    expect(byType.length).toBeGreaterThan(0);
    expect(byType.every((r) => r.leaveTypeName === 'Sick Leave')).toBe(true);
    const byName = await all(api.leave.iterateRequests({ leaveStatus: 'Approved' }));
    const byNumber = await all(api.leave.iterateRequests({ leaveStatus: 2 }));
    expect(byName.length).toBeGreaterThan(0);
    expect(byName.map((r) => r.id)).toEqual(byNumber.map((r) => r.id));
    expect(byName.every((r) => r.leaveStatus === 'Approved' && r.leaveStatusId === 2)).toBe(true);
    const inMarch = await all(api.leave.iterateRequests({ startDate: '2026-03-01', endDate: '2026-03-31' }));
    expect(inMarch.length).toBeGreaterThan(0);
    expect(inMarch.every((r) => r.startDate >= '2026-03-01' && r.startDate <= '2026-03-31')).toBe(true);
    const search = await all(api.leave.iterateRequests({ searchTerm: 'okafor' }));
    expect(search.length).toBeGreaterThan(0);
    expect(search.every((r) => r.employeeName === 'Ada Okafor')).toBe(true);
    const byEmail = await all(api.leave.iterateRequests({ searchTerm: 'kwame.mensah@' }));
    expect(byEmail.every((r) => r.employeeName === 'Kwame Mensah') && byEmail.length > 0).toBe(true);
    const byTypeName = await all(api.leave.iterateRequests({ searchTerm: 'study' }));
    expect(byTypeName.every((r) => r.leaveTypeName === 'Study Leave') && byTypeName.length > 0).toBe(true);
  });

  it('orders newest first by default and oldest first with orderBy 0', async () => {
    const newest = (await api.leave.listRequests({ pageSize: 100 })).data.map((r) => r.requestedOn);
    const oldest = (await api.leave.listRequests({ pageSize: 100, orderBy: 0 })).data.map(
      (r) => r.requestedOn,
    );
    expect(newest).toEqual([...newest].sort().reverse());
    expect(oldest).toEqual([...newest].reverse());
  });

  it('reads one request with its details', async () => {
    const row = mock.state.leaveRequests.find((r) => r.documents.length > 0)!;
    const details = await api.leave.getRequest(row.id);
    expect(details).toMatchObject({ id: row.id, startDate: row.startDate, endDate: row.endDate });
    expect(details.jobRoles.length).toBe(1);
    expect(details.department.length).toBe(1);
    expect(details.documents[0]).toMatchObject({ storage: 0, document: expect.stringMatching(/^https:/) });
  });

  it('reads a balance, with the full allowance when none was set up (spec rule 1)', async () => {
    const { ada, annual, sick } = ids();
    const balance = await api.leave.getBalance({ employeeId: ada.id, leaveTypeId: annual });
    expect(balance.totalDays).toBe(20);
    expect(balance.daysRemaining).toBe(balance.totalDays - balance.daysTaken);
    expect(await api.leave.getBalance({ employeeId: ada.id, leaveTypeId: sick })).toEqual({
      totalDays: 10,
      daysTaken: 0,
      daysRemaining: 10,
      leavePending: 0,
      leaveRejected: 0,
    });
  });

  it('lists leave types with every filter', async () => {
    const { lagos } = ids();
    const types = await api.leave.listTypes();
    expect(types.totalRecords).toBe(5);
    expect(types.data[0]).toMatchObject({ carryForward: { maxCarryForwardLimit: 5, expirationDate: 2 } });
    expect((await api.leave.listTypes({ companyId: lagos })).data.map((t) => t.name)).toEqual([
      'Study Leave',
    ]);
    expect((await api.leave.listTypes({ searchTerm: 'sick' })).data.map((t) => t.name)).toEqual([
      'Sick Leave',
    ]);
    expect((await api.leave.listTypes({ isActive: false })).data.map((t) => t.name)).toEqual(['Sabbatical']);
    expect((await api.leave.listTypes({ isActive: true })).totalRecords).toBe(4);
    expect((await api.leave.listTypes({ eligibilityCriteria: 2 })).data.map((t) => t.name)).toEqual([
      'Compassionate Leave',
    ]);
    expect(await all(api.leave.iterateTypes({ pageSize: 2 }))).toHaveLength(5);
  });
});

describe('api.attendance', () => {
  it('lists records most recent day first and iterates them all', async () => {
    const page = await api.attendance.listRecords();
    expect(page.pageSize).toBe(10);
    const every = await all(api.attendance.iterateRecords({ pageSize: 50 }));
    expect(every).toHaveLength(page.totalRecords);
    const days = every.map((r) => r.attendanceDate);
    expect(days).toEqual([...days].sort().reverse());
  });

  it('applies every filter of the attendance list', async () => {
    const { ada, lagos, engineering, platform } = ids();
    const total = (await api.attendance.listRecords()).totalRecords;
    const check = async (
      params: Parameters<ApiClient['attendance']['listRecords']>[0],
      ok: (r: AttendanceRecord) => boolean,
    ) => {
      const found = await all(api.attendance.iterateRecords({ ...params, pageSize: 100 }));
      expect(found.length, JSON.stringify(params)).toBeGreaterThan(0);
      expect(found.length, JSON.stringify(params)).toBeLessThan(total);
      expect(found.every(ok), JSON.stringify(params)).toBe(true);
    };
    const day = mock.state.reports[3]!.reportDate;
    await check({ startDate: day, endDate: day }, (r) => r.attendanceDate === day);
    await check({ startDate: day }, (r) => r.attendanceDate >= day);
    await check({ employeeId: ada.id }, (r) => r.employeeId === ada.id);
    await check({ companyId: lagos }, (r) => r.company.id === lagos);
    await check({ department: engineering }, (r) => r.department === 'Engineering');
    await check({ unit: platform }, (r) => r.employeeId === ada.id);
    await check({ status: 'Late' }, (r) => r.status === 'Late');
    await check({ status: 2 }, (r) => r.status === 'Absent');
    await check({ status: 'Holiday' }, (r) => r.status === 'Holiday');
    await check({ workMode: 'Remote' }, (r) => r.workmode === 'Remote');
    await check({ workMode: 1 }, (r) => r.workmode === 'Onsite');
    await check({ applicableDay: 'Monday' }, (r) => r.applicableDay === 'Monday');
    await check({ needsReview: true }, (r) => r.needsReview === true);
    await check({ searchTerm: 'Hughes' }, (r) => r.lastName === 'Hughes');
  });

  it('lists exceptions with every filter, at most 100 a page', async () => {
    const { ada, london } = ids();
    const total = (await api.attendance.listExceptions()).totalRecords;
    expect((await api.attendance.listExceptions({ pageSize: 100 })).data).toHaveLength(total);
    const check = async (
      params: Parameters<ApiClient['attendance']['listExceptions']>[0],
      ok: (e: AttendanceException) => boolean,
    ) => {
      const found = await all(api.attendance.iterateExceptions(params));
      expect(found.length, JSON.stringify(params)).toBeGreaterThan(0);
      expect(found.length, JSON.stringify(params)).toBeLessThan(total);
      expect(found.every(ok), JSON.stringify(params)).toBe(true);
    };
    const one = mock.state.exceptions[5]!;
    await check(
      { from: one.startDate, to: one.startDate },
      (e) => e.startDate <= one.startDate && e.endDate >= one.startDate,
    );
    await check({ employeeId: ada.id }, (e) => e.employeeId === ada.id);
    await check({ companyId: london }, (e) => e.companyId === london);
    await check({ departmentId: mock.state.departments[2]!.id }, (e) => e.companyId === london);
    await check({ status: 'Approved' }, (e) => e.status === 'Approved');
    await check({ status: 4 }, (e) => e.status === 'Cancelled');
    await check({ type: 'CompanyClosure' }, (e) => e.type === 'CompanyClosure' && e.batchId !== undefined);
    await check({ type: 3 }, (e) => e.type === 'RemoteDay');
    await check(
      { batchId: mock.state.exceptions.find((e) => e.batchId)!.batchId! },
      (e) => e.type === 'CompanyClosure',
    );
    await check({ search: 'Okafor' }, (e) => e.employeeName === 'Ada Okafor');
    const single = await api.attendance.getException(one.id);
    expect(single).toMatchObject({ id: one.id, canCancel: false, days: expect.any(Number) });
    expect(single).not.toHaveProperty('reason');
  });

  it('reads an absence report by the id the event carries', async () => {
    const row = mock.state.reports.at(-1)!;
    const report = await api.attendance.getReport(row.reportId);
    expect(report).toMatchObject({ reportId: row.reportId, reportDate: row.reportDate, status: 'Completed' });
  });

  it('lists company holidays (all, or one company plus organisation-wide) and public holidays', async () => {
    const { lagos, london } = ids();
    const every = await api.attendance.listHolidays({ year: 2026 });
    expect(every.map((h) => h.occursOn)).toEqual([...every.map((h) => h.occursOn)].sort());
    const london26 = await api.attendance.listHolidays({ year: 2026, companyId: london });
    expect(london26.every((h) => h.companyId === undefined || h.companyId === london)).toBe(true);
    expect(london26.length).toBeLessThan(every.length);
    expect((await api.attendance.listHolidays()).length).toBe(every.length); // Year defaults to this year
    const countries = new Set(
      (await api.attendance.listPublicHolidays({ year: 2027 })).map((h) => h.countryName),
    );
    expect(countries).toEqual(new Set(['Nigeria', 'Ghana', 'United Kingdom']));
    const lagosHolidays = await api.attendance.listPublicHolidays({ year: 2027, companyId: lagos });
    expect(new Set(lagosHolidays.map((h) => h.countryName))).toEqual(new Set(['Nigeria', 'Ghana']));
    expect(lagosHolidays.find((h) => h.name === 'Christmas')).toMatchObject({
      startDate: '2027-12-25',
      endDate: '2027-12-26',
    });
  });
});

describe('errors', () => {
  it('turns isSuccessful false into an ApiError with code, message and status', async () => {
    const other = createApiClient({ apiKey: mock.apiKeys.otherOrganization, baseUrl: mock.baseUrl });
    const error = await other.attendance.getException(mock.state.exceptions[0]!.id).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: 'not_found', status: 404 });
    const balance = other.leave.getBalance({ employeeId: ids().ada.id, leaveTypeId: ids().annual });
    await expect(balance).rejects.toBeInstanceOf(ApiError);
  });

  it('reports a key without the permission and an unknown key', async () => {
    const leaveOnly = createApiClient({ apiKey: mock.apiKeys.leave, baseUrl: mock.baseUrl });
    await expect(leaveOnly.attendance.listRecords()).rejects.toMatchObject({ status: 403 });
    const unknown = createApiClient({ apiKey: 'wf_nope', baseUrl: mock.baseUrl });
    await expect(unknown.leave.listTypes()).rejects.toMatchObject({ status: 401, code: 'unauthorized' });
  });

  it('keeps a base URL path prefix', async () => {
    const prefixed = createApiClient({ apiKey: mock.apiKeys.full, baseUrl: `${mock.baseUrl}/nothing-here` });
    await expect(prefixed.leave.listTypes()).rejects.toMatchObject({ status: 404 });
  });
});
