// How to test your own handlers: signed deliveries with supertest, and the local mock service end to end.
// #region test
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createApiClient } from 'workforce-webhooks/api';
import { createMockService, createSignedDelivery } from 'workforce-webhooks/testing';
import { createApp } from './app.js';

const secret = 'whsec_test_only';

describe('my webhook route', () => {
  it('accepts a signed leave.approved and runs the handler once', async () => {
    const lines: string[] = [];
    const { app, receiver } = createApp({ secret, log: (line) => lines.push(line) });
    const delivery = await createSignedDelivery({
      secret,
      type: 'leave.approved',
      data: {
        leaveRequestId: '7d2c3a1e-0000-4000-8000-000000000001',
        employeeId: '7d2c3a1e-0000-4000-8000-000000000002',
        leaveTypeId: '7d2c3a1e-0000-4000-8000-000000000003',
        leaveType: 'Annual Leave',
        startDate: '2026-12-24T00:00:00',
        endDate: '2026-12-31T00:00:00',
        status: 'Approved',
      },
    });

    await request(app).post('/webhooks/workforce').set(delivery.headers).send(delivery.body).expect(202);
    await request(app).post('/webhooks/workforce').set(delivery.headers).send(delivery.body).expect(200);
    await receiver.close(); // drains the queue: the handlers have run

    expect(lines.filter((line) => line.startsWith('calendar:'))).toHaveLength(1);
  });

  it('gets leave.approved from the local mock service and reads the request back through the API', async () => {
    const mock = await createMockService();
    const api = createApiClient({ apiKey: mock.apiKeys.full, baseUrl: mock.baseUrl });
    const { app, receiver } = createApp({ secret, api, log: () => {} });
    const fetched: string[] = [];
    receiver.on('leave.approved', async (event, ctx) => {
      const leave = await ctx.api.leave.getRequest(event.data.leaveRequestId);
      fetched.push(leave.leaveStatus);
    });
    const server = app.listen(0);
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as { port: number };
    mock.subscribe(`http://127.0.0.1:${port}/webhooks/workforce`, { secret });

    const pending = mock.state.leaveRequests.find((leave) => leave.statusId === 0);
    if (pending === undefined) throw new Error('the mock has no pending leave request');
    const emission = await mock.approveLeave(pending.id);
    expect(emission.attempts[0]?.status).toBe(202);

    await receiver.close();
    server.close();
    await mock.close();
    expect(fetched).toEqual(['Approved']);
  });
});
// #endregion test
