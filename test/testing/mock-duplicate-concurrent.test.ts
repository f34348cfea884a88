// faults: { duplicate: 'concurrent' } has both copies of a delivery in flight at once, as when the service sends an
// event again while the endpoint is still on the first copy (spec rules 2 and 3).
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createMockService } from 'workforce-webhooks/testing';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

/**
 * An endpoint with a check-then-insert dedupe that answers no copy before two are in hand, so it answers only when
 * the copies overlap; it records how many copies passed the check.
 */
async function checkThenInsert(): Promise<{ url: string; handled: () => number; ids: string[] }> {
  const seen = new Set<string>();
  const ids: string[] = [];
  const held: ServerResponse[] = [];
  let handled = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const id = String(req.headers['svc-event-id']);
      ids.push(String(req.headers['svc-delivery-id']));
      const fresh = !seen.has(id);
      held.push(res);
      if (held.length < 2) return;
      // Both copies checked before either was written down: the race the service's overlapping copies expose.
      if (fresh) handled += held.length;
      seen.add(id);
      for (const answer of held.splice(0)) answer.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/hooks`, handled: () => handled, ids };
}

describe("the mock's duplicate fault", () => {
  it("'concurrent' sends both copies at once, so an endpoint sees the second before it answers the first", async () => {
    const endpoint = await checkThenInsert();
    const mock = await createMockService({ today: '2026-06-15', retryScheduleMs: [] });
    cleanup.push(() => mock.close());
    mock.subscribe(endpoint.url);

    const { event, attempts } = await mock.sendTest({ faults: { duplicate: 'concurrent' } });

    expect(attempts).toHaveLength(2);
    expect(attempts.map((a) => [a.eventId, a.ok, a.status])).toEqual([
      [event.id, true, 200],
      [event.id, true, 200],
    ]);
    // Two deliveries of one event: a new delivery id each.
    expect(new Set(attempts.map((a) => a.deliveryId)).size).toBe(2);
    expect(new Set(endpoint.ids)).toEqual(new Set(attempts.map((a) => a.deliveryId)));
    // The dedupe that checks, then inserts, let both copies through.
    expect(endpoint.handled()).toBe(2);
  });

  it("'concurrent' given to createMockService applies to every delivery", async () => {
    const endpoint = await checkThenInsert();
    const mock = await createMockService({
      today: '2026-06-15',
      retryScheduleMs: [],
      faults: { duplicate: 'concurrent' },
    });
    cleanup.push(() => mock.close());
    mock.subscribe(endpoint.url);
    const { attempts } = await mock.emit('payroll.paid', { payrollRunId: 'r1' });
    expect(attempts.map((a) => a.ok)).toEqual([true, true]);
  });
});
