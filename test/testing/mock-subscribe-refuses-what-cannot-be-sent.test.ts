// subscribe() refuses, with the fix, what no delivery could be sent with (an empty secret, a URL fetch cannot parse)
// or an endpoint that would hear of nothing (an organisation the mock lacks), and the sender never waits for ever on a
// secret that cannot sign.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createMockService, type MockService } from 'workforce-webhooks/testing';
import { createSender } from '../../testing/mock-service/sender.js';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

async function mockService(): Promise<MockService> {
  const mock = await createMockService({ today: '2026-06-15', retryScheduleMs: [] });
  cleanup.push(() => mock.close());
  return mock;
}

/** A subscriber on loopback answering 200 to everything, and how many deliveries it got. */
async function subscriber(): Promise<{ url: string; count: () => number }> {
  let count = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      count++;
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, count: () => count };
}

// A hang shows as this rather than as the test's own time limit; generous, the machine is shared.
const within = <T>(work: Promise<T>, what: string): Promise<T> =>
  Promise.race([
    work,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`${what} did not end within 15 s`)), 15_000).unref(),
    ),
  ]);

describe("the mock's subscribe()", () => {
  it('refuses an empty secret (an unset variable) with the fix, and the mock still sends and closes', async () => {
    const mock = await mockService();
    const { url, count } = await subscriber();
    expect(() => mock.subscribe(url, { secret: '' })).toThrow(
      'workforce-webhooks mock: secret must be a non-empty string, the secret your endpoint verifies with; leave it out for a new one',
    );
    expect(() => mock.subscribe(url, { secret: 42 as unknown as string })).toThrow(/non-empty string/);
    mock.subscribe(url, { secret: 'whsec_the_endpoints_own' });
    const { attempts } = await within(mock.sendTest(), 'sendTest()');
    expect(attempts.map((a) => a.status)).toEqual([200]);
    expect(count()).toBe(1);
    await within(mock.close(), 'close()');
  });

  it('refuses a URL fetch cannot parse, and takes a scheme written in capitals', async () => {
    const mock = await mockService();
    expect(() => mock.subscribe('http://exa mple.test/hooks')).toThrow(
      'workforce-webhooks mock: http://exa mple.test/hooks is not an http(s) URL',
    );
    expect(() => mock.subscribe('http://')).toThrow(/is not an http\(s\) URL/);
    expect(() => mock.subscribe('ftp://example.test/hooks')).toThrow(/is not an http\(s\) URL/);
    const { url, count } = await subscriber();
    mock.subscribe(url.replace('http://', 'HTTP://'));
    const { attempts } = await mock.sendTest();
    expect(attempts.map((a) => a.ok)).toEqual([true]);
    expect(count()).toBe(1);
  });
});

describe("the mock's subscribe() for an organisation", () => {
  it('refuses one the mock does not have, which would hear of nothing, and takes either of its own', async () => {
    const mock = await mockService();
    const { url } = await subscriber();
    const mistyped = '00000000-0000-4000-8000-0000000000ff';
    expect(() => mock.subscribe(url, { organizationId: mistyped })).toThrow(
      `workforce-webhooks mock: no organisation "${mistyped}" in the mock; give mock.organizationId (the default) or another of mock.state.organizations`,
    );
    const other = mock.state.organizations.find((o) => o.id !== mock.organizationId)!;
    expect(mock.subscribe(url, { organizationId: other.id }).organizationId).toBe(other.id);
    expect(mock.subscribe(url).organizationId).toBe(mock.organizationId);
  });
});

describe("the mock's sender given a secret that cannot sign", () => {
  it('records the attempt as failed, naming the secret, rather than leaving the delivery and close() waiting', async () => {
    const { url, count } = await subscriber();
    const sender = createSender({ retryScheduleMs: [] });
    cleanup.push(() => sender.close());
    const event = {
      id: crypto.randomUUID(),
      type: 'webhook.test',
      apiVersion: '2026-10-15',
      occurredAt: new Date().toISOString(),
      organizationId: '00000000-0000-4000-8000-000000000001',
      data: {},
    };
    const attempts = await within(
      sender.deliver(event, [{ id: 'endpoint', url, secret: '', events: 'all' }]),
      'deliver()',
    );
    expect(attempts).toMatchObject([{ ok: false, attempt: 1, error: expect.stringMatching(/secret/) }]);
    expect(count()).toBe(0);
    await within(sender.settled(), 'settled()');
    await within(sender.close(), 'close()');
  });
});
