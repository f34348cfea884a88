// Every event of the mock names the organisation of its record (spec "Delivery format": `organizationId` is "the
// organisation"), so a handler fetching the record with that organisation's key finds it.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError, createApiClient } from 'workforce-webhooks/api';
import { createMockService, type MockService } from 'workforce-webhooks/testing';

let mock: MockService;
afterEach(() => mock.close());

describe("events of the fixtures' second organisation", () => {
  it('leave.requested for an employee of the other organisation names that organisation', async () => {
    mock = await createMockService({ today: '2026-06-15' });
    const employee = mock.state.employees.find((e) => e.organizationId !== mock.organizationId)!;
    const type = mock.state.leaveTypes.find((t) => t.organizationId === employee.organizationId)!;
    const { event } = await mock.requestLeave({
      employeeId: employee.id,
      leaveTypeId: type.id,
      startDate: '2026-06-22',
    });
    const leaveRequestId = (event.data as { leaveRequestId: string }).leaveRequestId;

    // The key of the organisation the event names reads the record the event is about.
    const named = createApiClient({
      apiKey: mock.apiKeys.otherOrganization,
      baseUrl: mock.baseUrl,
      rateLimit: false,
    });
    const readByNamedOrg = await named.leave.getRequest(leaveRequestId).then(
      () => 'found',
      (error: unknown) => (error instanceof ApiError ? `ApiError ${error.status}` : String(error)),
    );
    expect({ organizationId: event.organizationId, readByNamedOrg }).toEqual({
      organizationId: employee.organizationId,
      readByNamedOrg: 'found',
    });
  });

  it("is sent only to that organisation's endpoints: an endpoint hears of its own organisation's events", async () => {
    mock = await createMockService({ today: '2026-06-15', retryScheduleMs: [] });
    const heard = { main: [] as string[], other: [] as string[] };
    const servers = await Promise.all(
      (['main', 'other'] as const).map(
        (name) =>
          new Promise<Server>((resolve) => {
            const server = createServer((req, res) => {
              heard[name].push(String(req.headers['svc-event-type']));
              res.writeHead(200).end();
            });
            server.listen(0, '127.0.0.1', () => resolve(server));
          }),
      ),
    );
    const [main, other] = servers.map((s) => `http://127.0.0.1:${(s.address() as AddressInfo).port}/hooks`);
    try {
      mock.subscribe(main!);
      const employee = mock.state.employees.find((e) => e.organizationId !== mock.organizationId)!;
      mock.subscribe(other!, { organizationId: employee.organizationId });
      const type = mock.state.leaveTypes.find((t) => t.organizationId === employee.organizationId)!;
      await mock.requestLeave({ employeeId: employee.id, leaveTypeId: type.id, startDate: '2026-06-22' });
      await mock.sendTest();
      await mock.settled();
      expect(heard).toEqual({ main: ['webhook.test'], other: ['leave.requested'] });
    } finally {
      for (const server of servers) server.close();
    }
  });
});
