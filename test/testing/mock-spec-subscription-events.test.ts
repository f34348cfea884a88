// Spec "Subscription": an endpoint gets "Every event" or "Selected events (only those chosen)". An event choice that
// names no type would hear of nothing, silently, and one that is not a list of types would be matched by substring:
// the mock's subscribe() refuses either with the fix.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createMockService, type MockService } from 'workforce-webhooks/testing';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

async function mockService(): Promise<MockService> {
  const mock = await createMockService({ today: '2026-06-15', retryScheduleMs: [] });
  cleanup.push(() => mock.close());
  return mock;
}

/** A subscriber on loopback answering 200, and the types it got. */
async function subscriber(): Promise<{ url: string; types: string[] }> {
  const types: string[] = [];
  const server = createServer((req, res) => {
    types.push(String(req.headers['svc-event-type']));
    req.resume();
    req.on('end', () => res.writeHead(200).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, types };
}

describe('spec "Subscription": the event choice of the mock\'s subscribe()', () => {
  it.each([
    ['no type at all', []],
    ['a type given alone, not in a list', 'leave.approved'],
    ['an empty type', ['leave.approved', '']],
  ])('refuses %s, naming the fix', async (_, events) => {
    const mock = await mockService();
    const { url, types } = await subscriber();
    expect(() => mock.subscribe(url, { events: events as readonly string[] })).toThrow(
      "workforce-webhooks mock: events must list the event types the endpoint chose, e.g. ['leave.approved']; leave it out for every event",
    );
    await mock.approveLeave(mock.state.leaveRequests.find((r) => r.statusId === 0)!.id);
    await mock.settled();
    expect(types).toEqual([]);
  });

  it('takes selected types, and sends those only', async () => {
    const mock = await mockService();
    const { url, types } = await subscriber();
    mock.subscribe(url, { events: ['leave.approved'] });
    const undecided = mock.state.leaveRequests.filter((r) => r.statusId === 0);
    await mock.rejectLeave(undecided[0]!.id);
    await mock.approveLeave(undecided[1]!.id);
    await mock.settled();
    expect(types).toEqual(['leave.approved']);
  });
});
