// Leave dates are calendar dates: the same day in Los Angeles and Tokyo, never shifted through a Date.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, isCalendarDate, toCalendarDate } from 'workforce-webhooks/api';
import { createMockService, type MockService } from 'workforce-webhooks/testing';

let mock: MockService;
const originalTz = process.env.TZ;

beforeAll(async () => {
  mock = await createMockService({ today: '2026-06-15' });
});
afterAll(async () => {
  process.env.TZ = originalTz;
  await mock.close();
});

describe.each(['America/Los_Angeles', 'Asia/Tokyo'])('TZ=%s', (zone) => {
  it('exposes the days the service wrote', async () => {
    process.env.TZ = zone;
    // Proof that the zone took effect in this process: midnight UTC is another local day or hour.
    expect(new Date('2026-03-02T00:00:00Z').getTimezoneOffset()).toBe(zone === 'Asia/Tokyo' ? -540 : 480);
    const api = createApiClient({ apiKey: mock.apiKeys.full, baseUrl: mock.baseUrl });
    const requests = (await api.leave.listRequests({ pageSize: 100 })).data;
    for (const request of requests) {
      const row = mock.state.leaveRequests.find((r) => r.id === request.id)!;
      expect([request.startDate, request.endDate]).toEqual([row.startDate, row.endDate]);
    }
    const details = await api.leave.getRequest(requests[0]!.id);
    expect(details.startDate).toBe(requests[0]!.startDate);
    expect(toCalendarDate('2026-01-01T00:00:00')).toBe('2026-01-01');
    expect(toCalendarDate('2026-12-31T00:00:00')).toBe('2026-12-31');
  });
});

describe('toCalendarDate', () => {
  it('accepts the two forms the service writes and refuses others', () => {
    expect(toCalendarDate('2026-03-02')).toBe('2026-03-02');
    expect(toCalendarDate('2026-03-02T00:00:00.000')).toBe('2026-03-02');
    expect(() => toCalendarDate('2026-03-02T05:00:00')).toThrow(TypeError);
    expect(() => toCalendarDate('2026-02-29')).toThrow(TypeError);
    expect(isCalendarDate('2028-02-29')).toBe(true);
    expect(isCalendarDate('2026-13-01')).toBe(false);
  });
});
