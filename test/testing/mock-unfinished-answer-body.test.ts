// Spec rule 2: a 2xx status within the time limit is a delivery. A subscriber that sends its status and then leaves
// its body unfinished (or cuts it short) is judged on the status, as one streaming a body without end is.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createMockService } from 'workforce-webhooks/testing';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

async function subscriberAt(answer: (res: ServerResponse, req: IncomingMessage) => void): Promise<string> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => answer(res, req));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
}

// The status goes out at once; the body starts and never ends.
const unfinished =
  (status: number) =>
  (res: ServerResponse): void => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.write('{"received":');
  };

async function firstAttempt(url: string) {
  // A limit wide enough for the status to come on a busy machine; the body never comes whatever the limit.
  const mock = await createMockService({ today: '2026-06-15', timeoutMs: 3000, retryScheduleMs: [60_000] });
  cleanup.push(() => mock.close());
  mock.subscribe(url);
  const { attempts } = await mock.sendTest();
  return attempts[0];
}

describe('a subscriber that sends its status and leaves the body unfinished', () => {
  it('is delivered on a 2xx status, not retried as if it had never answered', async () => {
    const attempt = await firstAttempt(await subscriberAt(unfinished(200)));
    expect(attempt).toMatchObject({ status: 200, ok: true });
    expect(attempt).not.toHaveProperty('error');
    expect(attempt).not.toHaveProperty('retryInMs');
  });

  it('fails on a 3xx or 5xx status, shown with that status', async () => {
    for (const status of [302, 503]) {
      const attempt = await firstAttempt(await subscriberAt(unfinished(status)));
      expect(attempt).toMatchObject({ status, ok: false, retryInMs: 60_000 });
      expect(attempt).not.toHaveProperty('error');
    }
  });

  it('is delivered on a 2xx status when the connection drops in the middle of the body', async () => {
    const attempt = await firstAttempt(
      await subscriberAt((res, req) => {
        res.writeHead(202, { 'content-length': '100' });
        res.write('{"received":', () => req.socket.destroy());
      }),
    );
    expect(attempt).toMatchObject({ status: 202, ok: true });
  });
});
