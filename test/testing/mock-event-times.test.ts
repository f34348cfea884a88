// Spec rule 4: a receiver orders a record's events by occurredAt. The mock's events never tie, so a receiver with
// ordering on sees a record's events in the order the mock made them, even on a fixed test clock.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { byDefaultKeys, createReceiver } from 'workforce-webhooks';
import { createNodeHandler } from 'workforce-webhooks/node';
import { createMockService } from 'workforce-webhooks/testing';

const SECRET = 'whsec_mock_event_times';
const FIXED = Date.parse('2026-06-15T10:00:00.000Z');
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

/** A receiver with ordering on (leave.* by leaveRequestId) on loopback, and what its handlers and onStale saw. */
async function orderedReceiver(): Promise<{ url: string; handled: string[]; stale: string[] }> {
  const handled: string[] = [];
  const stale: string[] = [];
  const receiver = createReceiver({
    secret: SECRET,
    mode: 'inline',
    ordering: { key: byDefaultKeys() },
    onStale: (event) => {
      stale.push(event.type);
    },
  }).on('leave.*', (event) => {
    handled.push(event.type);
  });
  const server = createServer(createNodeHandler(receiver));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(async () => {
    await receiver.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, handled, stale };
}

describe("the mock's event times", () => {
  it('on a fixed clock, a leave approved then cancelled reaches an ordering receiver as both, in that order', async () => {
    // Ten records: with tied times the receiver's order of the two would be the random order of their ids.
    for (let round = 0; round < 10; round++) {
      const { url, handled, stale } = await orderedReceiver();
      const mock = await createMockService({ today: '2026-06-15', now: () => FIXED, retryScheduleMs: [] });
      cleanup.push(() => mock.close());
      mock.subscribe(url, { secret: SECRET });
      const { id } = mock.state.leaveRequests.find(
        (r) =>
          r.statusId === 0 &&
          mock.state.employees.some((e) => e.id === r.employeeId && e.organizationId === mock.organizationId),
      )!;
      const approved = await mock.approveLeave(id);
      const cancelled = await mock.cancelLeave(id);
      expect(Date.parse(cancelled.event.occurredAt)).toBeGreaterThan(Date.parse(approved.event.occurredAt));
      expect({ handled, stale }).toEqual({ handled: ['leave.approved', 'leave.cancelled'], stale: [] });
    }
  });

  it('gives the events of one tick increasing times, so a reordered delivery shows the older one as stale', async () => {
    const { url, handled, stale } = await orderedReceiver();
    const mock = await createMockService({ today: '2026-06-15', now: () => FIXED, retryScheduleMs: [] });
    cleanup.push(() => mock.close());
    mock.subscribe(url, { secret: SECRET });
    const data = { leaveRequestId: '5a3b1e00-0000-4000-8000-0000000000aa', status: 'Approved' };
    const [first, second] = await Promise.all([
      mock.emit('leave.approved', data, { faults: { reorder: true } }),
      mock.emit('leave.cancelled', { ...data, status: 'Abandoned' }),
    ]);
    expect(first.event.occurredAt < second.event.occurredAt).toBe(true);
    // Delivered last first: the cancellation runs, the approval that arrives after it is older.
    expect({ handled, stale }).toEqual({ handled: ['leave.cancelled'], stale: ['leave.approved'] });
  });

  it('follows a clock set back, so a test can still make an older event on purpose', async () => {
    let clock = FIXED + 60_000;
    const mock = await createMockService({ today: '2026-06-15', now: () => clock, retryScheduleMs: [] });
    cleanup.push(() => mock.close());
    const newer = await mock.sendTest();
    clock = FIXED;
    const older = await mock.sendTest();
    expect(newer.event.occurredAt).toBe('2026-06-15T10:01:00.000Z');
    expect(older.event.occurredAt).toBe('2026-06-15T10:00:00.000Z');
  });
});
