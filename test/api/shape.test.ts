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
  ])('%s', async (_, call, data, field) => {
    const error = await failureOf(data, call);
    expect(error.field).toBe(field);
    expect(error.message).toContain(error.endpoint!);
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
