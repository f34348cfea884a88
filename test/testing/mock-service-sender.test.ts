// The mock's sender against real receivers on loopback: the delivery format, triggers, retries and faults.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createReceiver, type LeaveApprovedData, verifySignature } from 'workforce-webhooks';
import { createApiClient, type LeaveRequestDetails } from 'workforce-webhooks/api';
import { createNodeHandler } from 'workforce-webhooks/node';
import { createMockService, type MockService } from 'workforce-webhooks/testing';

type Seen = { path: string | undefined; headers: IncomingMessage['headers']; body: string };
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server: Server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
}

/** A subscriber that records each delivery and answers with the next status of `script` (then 200). */
async function recorder(script: (number | 'slow')[] = []): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const url = await listen((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ path: req.url, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const next = script.shift() ?? 200;
      if (next === 'slow') return void setTimeout(() => res.writeHead(200).end(), 2000);
      res.writeHead(next, next >= 300 && next < 400 ? { location: '/elsewhere' } : {}).end();
    });
  });
  return { url, seen };
}

async function mockService(options: Parameters<typeof createMockService>[0] = {}): Promise<MockService> {
  const mock = await createMockService({ today: '2026-06-15', retryScheduleMs: [5, 5, 5], ...options });
  cleanup.push(() => mock.close());
  return mock;
}

describe('delivery format (spec "Delivery format", "Signature")', () => {
  it('POSTs JSON with the four Svc headers, a Svc-Webhooks User-Agent and a verifiable signature', async () => {
    const mock = await mockService();
    const { url, seen } = await recorder();
    const { secret } = mock.subscribe(url);
    expect(secret).toMatch(/^whsec_/);
    const { event, attempts } = await mock.sendTest();
    expect(attempts).toMatchObject([{ status: 200, ok: true, attempt: 1 }]);
    const [{ headers, body }] = seen as [Seen];
    expect(headers['content-type']).toBe('application/json; charset=utf-8');
    expect(headers['user-agent']).toMatch(/^Svc-Webhooks\/[\w.]+$/);
    expect(headers['svc-event-id']).toBe(event.id);
    expect(headers['svc-event-type']).toBe('webhook.test');
    expect(headers['svc-delivery-id']).toMatch(/^[0-9a-f-]{36}$/);
    await verifySignature({ payload: body, header: headers['svc-signature'] as string, secret });
    const parsed = JSON.parse(body);
    expect(Object.keys(parsed).sort()).toEqual([
      'apiVersion',
      'data',
      'id',
      'occurredAt',
      'organizationId',
      'type',
    ]);
    expect(parsed.apiVersion).toBe('2026-10-15');
    expect(parsed.occurredAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z$/);
    expect(parsed.organizationId).toBe(mock.organizationId);
  });

  it('sends only the events a subscription selected, and the Test action to it whatever it selected', async () => {
    const mock = await mockService();
    const { url, seen } = await recorder();
    mock.subscribe(url, { events: ['leave.approved'] });
    await mock.emit('leave.rejected', {});
    await mock.emit('leave.approved', {});
    await mock.sendTest();
    expect(seen.map((s) => s.headers['svc-event-type'])).toEqual(['leave.approved', 'webhook.test']);
  });
});

describe('triggers', () => {
  it('approving leave sends leave.approved, whose handler reads the request through ctx.api', async () => {
    const mock = await mockService();
    const secret = 'whsec_trigger';
    const api = createApiClient({ apiKey: mock.apiKeys.full, baseUrl: mock.baseUrl });
    const receiver = createReceiver({ secret, api, mode: 'inline' });
    const fetched: LeaveRequestDetails[] = [];
    const received: LeaveApprovedData[] = [];
    receiver.on('leave.approved', async (event, ctx) => {
      received.push(event.data);
      fetched.push(await ctx.api.leave.getRequest(event.data.leaveRequestId));
    });
    mock.subscribe(await listen(createNodeHandler(receiver)), { secret });
    const row = mock.state.leaveRequests.find((r) => r.statusId === 0)!;
    const { attempts } = await mock.approveLeave(row.id);
    expect(attempts).toMatchObject([{ status: 200, ok: true }]);
    const type = mock.state.leaveTypes.find((t) => t.id === row.leaveTypeId)!;
    expect(received).toEqual([
      {
        leaveRequestId: row.id,
        employeeId: row.employeeId,
        leaveTypeId: row.leaveTypeId,
        leaveType: type.name,
        startDate: `${row.startDate}T00:00:00`,
        endDate: `${row.endDate}T00:00:00`,
        status: 'Approved',
      },
    ]);
    expect(fetched[0]).toMatchObject({ id: row.id, leaveStatus: 'Approved', leaveStatusId: 2 });
    await expect(mock.approveLeave(row.id)).rejects.toThrow(/already decided/);
  });

  it('completing the absence report sends reportId, and the day has a record for everyone', async () => {
    const mock = await mockService();
    const { url, seen } = await recorder();
    mock.subscribe(url);
    const { event } = await mock.completeAbsenceReport();
    expect(event.type).toBe('attendance.absence_report.completed');
    const reportId = (event.data as { reportId: string }).reportId;
    const api = createApiClient({ apiKey: mock.apiKeys.full, baseUrl: mock.baseUrl });
    const report = await api.attendance.getReport(reportId);
    expect(report).toMatchObject({
      reportDate: '2026-06-15',
      status: 'Completed',
      totalEmployeesProcessed: 8,
    });
    const today = await api.attendance.listRecords({ startDate: '2026-06-15', endDate: '2026-06-15' });
    expect(today.totalRecords).toBe(8);
    expect(report.presentCount + report.lateCount + report.absentCount + report.excusedAbsenceCount).toBe(8);
    expect(JSON.parse(seen[0]!.body).data.reportId).toBe(reportId);
  });
});

describe('failures and retries (spec rules 2 and 5)', () => {
  it('retries non-2xx, 3xx and slow answers with the same event and delivery id, fresh signatures', async () => {
    const mock = await mockService({ timeoutMs: 500 });
    const { url, seen } = await recorder([500, 302, 'slow']);
    mock.subscribe(url);
    await mock.sendTest();
    await mock.settled();
    expect(mock.deliveries.map((d) => d.status ?? d.error)).toEqual([
      500,
      302,
      'no answer within 500 ms',
      200,
    ]);
    expect(mock.deliveries.map((d) => d.ok)).toEqual([false, false, false, true]);
    expect(mock.deliveries.map((d) => d.attempt)).toEqual([1, 2, 3, 4]);
    expect(new Set(seen.map((s) => s.headers['svc-delivery-id'])).size).toBe(1);
    expect(new Set(seen.map((s) => s.headers['svc-event-id'])).size).toBe(1);
    expect(seen.map((s) => s.path)).toEqual(['/hooks', '/hooks', '/hooks', '/hooks']); // the redirect was not followed
  });

  it('resends the bytes it first sent, whatever the test does to the event or its data afterwards', async () => {
    const mock = await mockService();
    const { url, seen } = await recorder([500, 500]);
    mock.subscribe(url);
    const data = { note: 'as emitted' };
    const { event } = await mock.emit('webhook.test', data);
    data.note = 'changed by the test';
    (event as { type: string }).type = 'changed.too';
    await mock.settled();
    expect(seen).toHaveLength(3);
    expect(new Set(seen.map((s) => s.body)).size).toBe(1);
    expect(JSON.parse(seen[2]!.body)).toMatchObject({ type: 'webhook.test', data: { note: 'as emitted' } });
  });

  it('stops after the last retry of the schedule', async () => {
    const mock = await mockService({ retryScheduleMs: [5, 5] });
    const { url } = await recorder([503, 503, 503, 503]);
    mock.subscribe(url);
    await mock.sendTest();
    await mock.settled();
    expect(mock.deliveries.map((d) => d.status)).toEqual([503, 503, 503]);
  });
});

describe('faults on request', () => {
  it('duplicates a delivery with a new delivery id, which a real receiver answers as a duplicate', async () => {
    const mock = await mockService();
    const secret = 'whsec_faults';
    const handled: string[] = [];
    const receiver = createReceiver({ secret }).on('webhook.test', (event) => {
      handled.push(event.id);
    });
    cleanup.push(() => receiver.close());
    mock.subscribe(await listen(createNodeHandler(receiver)), { secret });
    const { attempts } = await mock.sendTest({ faults: { duplicate: true } });
    expect(attempts.map((a) => a.status)).toEqual([202, 200]);
    expect(JSON.parse(attempts[1]!.body!)).toEqual({ received: true, duplicate: true });
    expect(attempts[0]!.deliveryId).not.toBe(attempts[1]!.deliveryId);
    expect(attempts[0]!.eventId).toBe(attempts[1]!.eventId);
  });

  it('reorders the events of one tick', async () => {
    const mock = await mockService();
    const { url, seen } = await recorder();
    mock.subscribe(url);
    const [a, b] = await Promise.all([
      mock.emit('employee.created', { n: 1 }, { faults: { reorder: true } }),
      mock.emit('employee.created', { n: 2 }),
    ]);
    expect(seen.map((s) => JSON.parse(s.body).id)).toEqual([b.event.id, a.event.id]);
  });

  it('signs wrongly, which a real receiver refuses with 400 and the sender retries', async () => {
    const mock = await mockService({ retryScheduleMs: [5] });
    const secret = 'whsec_faults';
    const receiver = createReceiver({ secret }).on('webhook.test', () => {});
    cleanup.push(() => receiver.close());
    mock.subscribe(await listen(createNodeHandler(receiver)), { secret });
    await mock.sendTest({ faults: { badSignature: true } });
    await mock.settled();
    expect(mock.deliveries.map((d) => [d.status, d.body])).toEqual([
      [400, '{"error":"signature_mismatch"}'],
      [400, '{"error":"signature_mismatch"}'],
    ]);
  });
});
