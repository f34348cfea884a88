// The absence report runs for a day that has happened (spec "Attendance status": HR runs it for the day, and after
// it the day's records are complete): a day after the mock's today is refused with the fix; nothing changes or is sent.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createApiClient } from 'workforce-webhooks/api';
import { createMockService, type MockService } from 'workforce-webhooks/testing';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

async function mockOn(today: string): Promise<MockService> {
  const mock = await createMockService({ today, now: () => Date.parse(`${today}T12:00:00Z`) });
  cleanup.push(() => mock.close());
  return mock;
}

/** A loopback endpoint that counts what it is sent. */
async function endpoint(): Promise<{ url: string; received: () => number }> {
  let received = 0;
  const server = createServer((req, res) => {
    received++;
    req.resume().on('end', () => res.writeHead(200).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(() => new Promise((resolve) => server.close(resolve)));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received: () => received,
  };
}

describe("completeAbsenceReport of a day after the mock's today", () => {
  it('is refused with the fix; no record is written, no report made, no event sent', async () => {
    const mock = await mockOn('2026-06-15');
    const { url, received } = await endpoint();
    mock.subscribe(url);
    const api = createApiClient({ apiKey: mock.apiKeys.full, baseUrl: mock.baseUrl });
    const tomorrow = { startDate: '2026-06-16', endDate: '2026-06-16' };
    const reports = mock.state.reports.length;

    await expect(mock.completeAbsenceReport('2026-06-16')).rejects.toThrow(
      "workforce-webhooks mock: 2026-06-16 is after the mock's today (2026-06-15): an absence report runs for a day that has happened; give today or an earlier day, or start the mock with a later today",
    );

    expect((await api.attendance.listRecords(tomorrow)).totalRecords).toBe(0);
    expect(mock.state.reports).toHaveLength(reports);
    await mock.settled();
    expect(received()).toBe(0);
    expect(mock.deliveries).toEqual([]);
  });

  it('still runs for today and for a day before it', async () => {
    const mock = await mockOn('2026-06-15');
    const api = createApiClient({ apiKey: mock.apiKeys.full, baseUrl: mock.baseUrl });

    const { event } = await mock.completeAbsenceReport();
    await mock.completeAbsenceReport('2026-06-13');

    expect((await api.attendance.getReport((event.data as { reportId: string }).reportId)).reportDate).toBe(
      '2026-06-15',
    );
    expect(mock.state.reports.at(-1)).toMatchObject({ reportDate: '2026-06-13' });
  });
});
