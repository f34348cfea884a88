// Spec "Company holiday": `occursOn` is "the day it falls on in the requested year"; `date`, for a recurring holiday,
// is "its first year". A recurring holiday sent without `occursOn` must not be read as falling on its first year's day.
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError, createApiClient } from 'workforce-webhooks/api';
import { createMockService } from 'workforce-webhooks/testing';
import { envelope, type Loopback, loopback } from './loopback.js';

const servers: Loopback[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

const id = '00000000-0000-4000-8000-000000000001';

async function holidaysServed(holidays: unknown[]): Promise<ReturnType<typeof createApiClient>> {
  const server = await loopback((_, res) => envelope(res, 200, holidays));
  servers.push(server);
  return createApiClient({ apiKey: 'wf_key', baseUrl: server.baseUrl });
}

describe('spec "Company holiday": occursOn of a recurring holiday', () => {
  it("is never made up from the first year's date: without it the answer is invalid_response naming the field", async () => {
    const api = await holidaysServed([
      { id, name: 'Census day', date: '2026-11-11', isRecurring: false, occursOn: '2026-11-11' },
      { id, name: "Founders' Day", date: '2023-06-12', isRecurring: true },
    ]);
    const error = await api.attendance.listHolidays({ year: 2026 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({
      code: 'invalid_response',
      status: 200,
      endpoint: 'GET /v1/attendance/holidays',
      field: 'data[1].occursOn',
    });
  });

  it('of a one-off holiday without it is its date, the only day it falls on', async () => {
    const api = await holidaysServed([{ id, name: 'Census day', date: '2026-11-11', isRecurring: false }]);
    const [holiday] = await api.attendance.listHolidays({ year: 2026 });
    expect(holiday).toMatchObject({ date: '2026-11-11', occursOn: '2026-11-11' });
  });

  it("as the mock sends it, is the requested year's day", async () => {
    const mock = await createMockService({ today: '2026-06-15' });
    try {
      const api = createApiClient({ apiKey: mock.apiKeys.full, baseUrl: mock.baseUrl });
      const founders = (await api.attendance.listHolidays({ year: 2030 })).find((h) => h.isRecurring);
      expect(founders).toBeDefined();
      expect(founders!.occursOn.slice(0, 4)).toBe('2030');
      expect(founders!.date < '2030').toBe(true);
    } finally {
      await mock.close();
    }
  });
});
