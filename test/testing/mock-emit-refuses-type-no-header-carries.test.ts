// mock.emit() refuses, with the fix, a type that cannot be sent as the Svc-Event-Type header, rather than failing
// every attempt with a TypeError blamed on the endpoint and retrying it.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createMockService } from 'workforce-webhooks/testing';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

describe("the mock's emit(type)", () => {
  it.each([
    ['a trailing newline', 'leave.approved\n'],
    ['a space', 'leave approved'],
    ['a letter outside ASCII', 'congé.approved'],
    ['nothing', ''],
  ])('refuses a type with %s before anything is sent', async (_, type) => {
    let received = 0;
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        received++;
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanup.push(() => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    });
    const mock = await createMockService({ today: '2026-06-15', retryScheduleMs: [1] });
    cleanup.push(() => mock.close());
    mock.subscribe(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`);

    const refused = mock.emit(type, {});
    await expect(refused).rejects.toThrow(TypeError);
    await expect(refused).rejects.toThrow(
      `workforce-webhooks mock: the event type must be printable ASCII without spaces (it is sent as the Svc-Event-Type header), got ${JSON.stringify(type)}`,
    );
    await mock.settled();
    // Nothing was attempted, so nothing failed on the endpoint's account or waits for a retry.
    expect(mock.deliveries).toEqual([]);

    // A type a header carries goes out as before.
    const { attempts } = await mock.emit('payroll.paid', { payrollRunId: 'r1' });
    expect(attempts.map((a) => a.status)).toEqual([200]);
    expect(received).toBe(1);
  });
});

describe("the mock's emit(type, data)", () => {
  it.each([
    ['missing', undefined, 'undefined'],
    ['null', null, 'null'],
    ['an array', [1], 'an array'],
    ['a string', 'x', 'x'],
  ])('refuses data that is %s, which no receiver takes as an event', async (_, data, shown) => {
    const mock = await createMockService({ today: '2026-06-15', retryScheduleMs: [1] });
    cleanup.push(() => mock.close());
    mock.subscribe('http://127.0.0.1:3999/hooks');
    await expect(mock.emit('payroll.paid', data as unknown as Record<string, unknown>)).rejects.toThrow(
      `workforce-webhooks mock: the event data must be an object (spec "Delivery format"), got ${shown}; give {} for none`,
    );
    await mock.settled();
    expect(mock.deliveries).toEqual([]);
  });
});
