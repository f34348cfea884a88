// An answer of an unexpected shape is ApiError invalid_response naming the field and the endpoint, never a crash.
import { describe, expect, it } from 'vitest';
import { type ApiClient, ApiError, createApiClient } from 'workforce-webhooks/api';
import { envelope, loopback, page } from './loopback.js';

const uuid = '00000000-0000-4000-8000-000000000001';

/** Serves `data` in a success envelope and returns what the call threw. */
async function failureOf(data: unknown, call: (api: ApiClient) => Promise<unknown>): Promise<ApiError> {
  const server = await loopback((_, res) => envelope(res, 200, data));
  try {
    const error = await call(createApiClient({ apiKey: 'wf_key', baseUrl: server.baseUrl })).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: 'invalid_response', status: 200 });
    return error as ApiError;
  } finally {
    await server.close();
  }
}

const holiday = { id: uuid, name: 'Leap Day', date: '2024-02-29', isRecurring: true };

describe('spec "Formats": dates written YYYY-MM-DD; an unreadable one names itself', () => {
  it('a recurring holiday said to fall on 2027-02-29', async () => {
    const error = await failureOf(
      [
        { ...holiday, occursOn: '2024-02-29' },
        { ...holiday, occursOn: '2027-02-29' },
      ],
      (api) => api.attendance.listHolidays({ year: 2027 }),
    );
    expect(error).toMatchObject({ endpoint: 'GET /v1/attendance/holidays', field: 'data[1].occursOn' });
    expect(error.message).toContain('GET /v1/attendance/holidays');
    expect(error.message).toContain('data[1].occursOn is "2027-02-29", not a calendar date');
  });

  it.each([
    [
      'a leave request date with a zone',
      (api: ApiClient) => api.leave.listRequests(),
      page([{ id: uuid, startDate: '2026-03-02T00:00:00Z', endDate: '2026-03-02T00:00:00' }]),
      'data.data[0].startDate',
      'GET /v1/leaverequest/list',
    ],
    [
      'a missing attendance date',
      (api: ApiClient) => api.attendance.listRecords(),
      page([{ id: uuid }]),
      'data.data[0].attendanceDate',
      'GET /v1/attendance/list',
    ],
    [
      'a report date as a number',
      (api: ApiClient) => api.attendance.getReport(uuid),
      { reportId: uuid, reportDate: 20260301 },
      'data.reportDate',
      `GET /v1/attendance/report/${uuid}`,
    ],
    [
      'a public holiday ending on 2026-13-01',
      (api: ApiClient) => api.attendance.listPublicHolidays(),
      [{ name: 'x', startDate: '2026-12-31', endDate: '2026-13-01' }],
      'data[0].endDate',
      'GET /v1/attendance/holidays/public',
    ],
  ])('%s', async (_, call, data, field, endpoint) => {
    expect(await failureOf(data, call)).toMatchObject({ field, endpoint });
  });
});

describe('spec "Response envelope": paged lists carry data, pageNumber, pageSize, totalRecords, totalPages', () => {
  it.each([
    ['no data array in a page', (api: ApiClient) => api.leave.listTypes(), { pageNumber: 1 }, 'data.data'],
    [
      'a page number as text',
      (api: ApiClient) => api.leave.listTypes(),
      { ...page([]), pageNumber: '1' },
      'data.pageNumber',
    ],
    ['a page that is an array', (api: ApiClient) => api.attendance.listExceptions(), [], 'data'],
    [
      'a record that is not an object',
      (api: ApiClient) => api.attendance.listExceptions(),
      page([null]),
      'data.data[0]',
    ],
    [
      'an unpaged list that is not an array',
      (api: ApiClient) => api.attendance.listHolidays(),
      page([]),
      'data',
    ],
    ['a single record missing', (api: ApiClient) => api.leave.getRequest(uuid), null, 'data'],
    [
      'a balance that is a number',
      (api: ApiClient) => api.leave.getBalance({ employeeId: uuid, leaveTypeId: uuid }),
      3,
      'data',
    ],
    [
      // Spec: pageNumber is the "page returned"; a server that ignores PageNumber answers page 1 to every ask.
      'a page other than the one asked for',
      (api: ApiClient) => api.leave.listRequests({ pageNumber: 2 }),
      page([]),
      'data.pageNumber',
    ],
  ])('%s', async (_, call, data, field) => {
    const error = await failureOf(data, call);
    expect(error.field).toBe(field);
    expect(error.message).toContain(error.endpoint!);
  });

  it('iterating stops at a page that is not the page asked for, instead of yielding page 1 again', async () => {
    const request = { id: uuid, startDate: '2026-03-02T00:00:00', endDate: '2026-03-02T00:00:00' };
    const server = await loopback((_, res) =>
      envelope(res, 200, { data: [request], pageNumber: 1, pageSize: 1, totalRecords: 3, totalPages: 3 }),
    );
    try {
      const api = createApiClient({ apiKey: 'wf_key', baseUrl: server.baseUrl });
      const seen: unknown[] = [];
      const error = await (async () => {
        for await (const leave of api.leave.iterateRequests()) seen.push(leave);
      })().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({ code: 'invalid_response', field: 'data.pageNumber' });
      expect((error as Error).message).toContain('data.pageNumber is 1, not 2, the page asked for');
      expect(seen).toHaveLength(1);
      expect(server.requests.map((url) => url.searchParams.get('PageNumber'))).toEqual(['1', '2']);
    } finally {
      await server.close();
    }
  });

  it('a value nested too deep to print, where a record should be, is invalid_response and not a RangeError', async () => {
    // 40 kB of valid JSON: an array nested 20 000 deep where the spec has a Company holiday object.
    const deep = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
    const server = await loopback((_, res) => {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      res.end(`{"isSuccessful":true,"code":"00","message":"Success","data":[${deep}]}`);
    });
    try {
      const api = createApiClient({ apiKey: 'wf_key', baseUrl: server.baseUrl });
      const error = await api.attendance.listHolidays().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({ code: 'invalid_response', field: 'data[0]' });
      expect((error as Error).message).toContain('data[0] is an array of 1, not an object');
    } finally {
      await server.close();
    }
  });

  it('a failure status with a success envelope is http_<status>, not the envelope\'s code 00 "Success"', async () => {
    const server = await loopback((_, res) => {
      res.writeHead(500, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify({ isSuccessful: true, code: '00', message: 'Success', data: null }));
    });
    try {
      const api = createApiClient({ apiKey: 'wf_key', baseUrl: server.baseUrl });
      await expect(api.leave.listTypes()).rejects.toMatchObject({
        name: 'ApiError',
        code: 'http_500',
        status: 500,
      });
    } finally {
      await server.close();
    }
  });

  it('an answer that is not the envelope, or not JSON', async () => {
    const server = await loopback((req, res) => {
      res.writeHead(req.url?.includes('leavetype') ? 200 : 502, { 'content-type': 'text/html' });
      res.end(req.url?.includes('leavetype') ? '{"data":[]}' : '<html>Bad gateway</html>');
    });
    try {
      const api = createApiClient({ apiKey: 'wf_key', baseUrl: server.baseUrl });
      await expect(api.leave.listTypes()).rejects.toMatchObject({
        code: 'invalid_response',
        field: 'isSuccessful',
      });
      await expect(api.attendance.listRecords()).rejects.toMatchObject({ code: 'http_502', status: 502 });
    } finally {
      await server.close();
    }
  });
});

const balance = { totalDays: 20, daysTaken: 5, daysRemaining: 15, leavePending: 2, leaveRejected: 0 };
const leaveType = {
  id: uuid,
  name: 'Sick Leave',
  description: 'Illness, with a note',
  maxLeaveDays: 10,
  carryForward: { maxCarryForwardLimit: 0, expirationDate: 2 },
  eligibilityCriteria: 0,
  requiresDocument: true,
  requiredDocument: [{ id: uuid, name: 'Sick note', document: 'https://files.example/note.pdf' }],
  isActive: true,
  created: '2024-01-10T08:00:00.000Z',
  lastModified: '2025-12-01T08:00:00.000Z',
};
const getBalance = (api: ApiClient) => api.leave.getBalance({ employeeId: uuid, leaveTypeId: uuid });
const listTypes = (api: ApiClient) => api.leave.listTypes();

describe('spec "Leave balance" and "Leave type": each field read as the type the spec gives it', () => {
  it.each([
    ['a balance count as text', getBalance, { ...balance, totalDays: '20' }, 'data.totalDays', '"20"'],
    ['a balance count missing', getBalance, { totalDays: 20 }, 'data.daysTaken', 'missing'],
    [
      'a balance count that is a fraction',
      getBalance,
      { ...balance, leavePending: 0.5 },
      'data.leavePending',
      '0.5',
    ],
    [
      'a leave type flag as text',
      listTypes,
      page([{ ...leaveType, isActive: 'yes' }]),
      'data.data[0].isActive',
      '"yes"',
    ],
    [
      'a carry-forward month 12',
      listTypes,
      page([{ ...leaveType, carryForward: { maxCarryForwardLimit: 0, expirationDate: 12 } }]),
      'data.data[0].carryForward.expirationDate',
      '12',
    ],
    [
      'a document template without a name',
      listTypes,
      page([{ ...leaveType, requiredDocument: [{ id: uuid, document: 'x' }] }]),
      'data.data[0].requiredDocument[0].name',
      'missing',
    ],
    [
      'a leave type with no name',
      listTypes,
      page([{ ...leaveType, name: null }]),
      'data.data[0].name',
      'null',
    ],
  ])('%s', async (_, call, data, field, shown) => {
    const error = await failureOf(data, call);
    expect(error).toMatchObject({ field });
    expect(error.message).toContain(`${field} is ${shown}`);
  });

  it("a balance and a leave type of the spec's shape pass as sent", async () => {
    const server = await loopback((req, res) =>
      envelope(res, 200, req.url?.startsWith('/v1/leavebalance/') ? balance : page([leaveType])),
    );
    try {
      const api = createApiClient({ apiKey: 'wf_key', baseUrl: server.baseUrl });
      expect(await getBalance(api)).toEqual(balance);
      expect((await listTypes(api)).data).toEqual([leaveType]);
    } finally {
      await server.close();
    }
  });
});
