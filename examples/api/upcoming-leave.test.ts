// The API example, run against the local mock service.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient } from 'workforce-webhooks/api';
import { createMockService, type MockService } from 'workforce-webhooks/testing';
import { balanceOf, upcomingLeave } from './upcoming-leave.js';

let mock: MockService;
beforeAll(async () => {
  mock = await createMockService({ today: '2026-11-21' });
});
afterAll(() => mock.close());

describe('examples/api', () => {
  it('lists approved leave in a range across pages', async () => {
    const api = createApiClient({ apiKey: mock.apiKeys.full, baseUrl: mock.baseUrl });
    const lines = await upcomingLeave(api, '2026-01-01', '2026-12-31');
    const approved = mock.state.leaveRequests.filter(
      (leave) =>
        leave.statusId === 2 && leave.startDate >= '2026-01-01' && leave.startDate <= '2026-12-31T23:59:59',
    );
    expect(approved.length).toBeGreaterThan(0);
    expect(lines).toHaveLength(approved.length);
    expect(lines[0]).toMatch(/^\d{4}-\d{2}-\d{2}\.\.\d{4}-\d{2}-\d{2} /);
  });

  it('counts a one-day leave as "1 day", and longer ones in days', async () => {
    const api = createApiClient({ apiKey: mock.apiKeys.full, baseUrl: mock.baseUrl });
    const lines = await upcomingLeave(api, '2026-01-01', '2026-12-31');
    const counts = lines.map((line) => /, ([\d.]+ days?)\)$/.exec(line)?.[1]);
    expect(counts).toContain('1 day');
    expect(counts).toContain('2 days');
    expect(counts).not.toContain('1 days');
    expect(counts).not.toContain(undefined);
  });

  it('turns an answer with isSuccessful false into undefined, and reads a real balance', async () => {
    const api = createApiClient({ apiKey: mock.apiKeys.full, baseUrl: mock.baseUrl });
    const leave = mock.state.leaveRequests[0]!;
    expect(await balanceOf(api, leave.employeeId, leave.leaveTypeId)).toEqual(expect.any(Number));
    expect(await balanceOf(api, '00000000-0000-4000-8000-00000000dead', leave.leaveTypeId)).toBeUndefined();
  });
});
