// `send` refused by the endpoint: after the answer, one line on what to look at first, as `check` and `mock` say it
// (the wrong secret, a URL that is not the webhook route), so a first try with the CLI is not a bare 400 or 404.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../cli/run.js';
import { createExampleApp } from '../../examples/express/server.js';
import { capture } from './capture.js';

const SECRET = 'whsec_send_hints_endpoint';

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** The Express example on loopback; resolves with its base URL. */
async function example(): Promise<string> {
  const { app, receiver } = createExampleApp({ secret: SECRET, log: () => {} });
  const server: Server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  closers.push(async () => {
    await receiver.close();
    await new Promise((resolve) => server.close(resolve));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const send = async (url: string, secret: string): Promise<{ code: number; out: string; err: string }> => {
  const io = capture('', { env: { WORKFORCE_WEBHOOK_SECRET: secret } });
  const code = await runCli(['send', '--url', url, '--type', 'leave.approved'], io);
  return { code, out: io.out, err: io.err };
};

describe('send refused by the endpoint', () => {
  it('with another secret than the endpoint verifies with, asks whether --secret is its secret', async () => {
    const base = await example();
    const { code, out, err } = await send(`${base}/webhooks/workforce`, 'whsec_not_this_endpoints');

    expect(out).toMatch(/^HTTP 400 in \d+ ms .*\n\{"error":"signature_mismatch"\}\n$/);
    expect(err).toContain("workforce-webhooks: is --secret this endpoint's secret?");
    expect(err).not.toContain('whsec_not_this_endpoints');
    expect(code).toBe(1);
  });

  it('at a path that is not the webhook route, asks whether --url is the route', async () => {
    const base = await example();
    const { code, out, err } = await send(base, SECRET);

    expect(out).toMatch(/^HTTP 404 /);
    expect(err).toContain(
      'workforce-webhooks: is --url the webhook route, with the receiver mounted for POST on it?',
    );
    expect(code).toBe(1);
  });

  it('accepted, says nothing more than the answer', async () => {
    const base = await example();
    const { code, err } = await send(`${base}/webhooks/workforce`, SECRET);

    expect(err).not.toContain('is --');
    expect(code).toBe(0);
  });
});
