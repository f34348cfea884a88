// `send` to a path an app answers with its HTML page (a single-page app's fallback): the service would count that 2xx
// as delivered though no handler ran, so send says the URL is not the webhook route and exits 1.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createExampleApp } from '../../examples/express/server.js';
import { runCliProcess } from './cli-process.js';

const SECRET = 'whsec_send_to_an_app_page';

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** The Express example on loopback, its other paths answered with the app's page; resolves with its base URL. */
async function appWithFallback(): Promise<string> {
  const { app, receiver } = createExampleApp({ secret: SECRET, log: () => {} });
  app.use((_req, res) => {
    res.send('<!doctype html>\n<html lang="en"><body><div id="root"></div></body></html>');
  });
  const server: Server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  closers.push(async () => {
    await receiver.close();
    await new Promise((resolve) => server.close(resolve));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const send = (url: string) =>
  runCliProcess(['send', '--url', url, '--type', 'leave.approved'], {
    ...process.env,
    WORKFORCE_WEBHOOK_SECRET: SECRET,
  });

describe('send answered 2xx with an HTML page', () => {
  it('prints the page, says --url is not the webhook route, and exits 1', async () => {
    const base = await appWithFallback();

    const { code, out, err } = await send(`${base}/webhook/workforce`);

    expect(out).toMatch(/^HTTP 200 in \d+ ms .*\n<!doctype html>/);
    expect(err).toContain(
      "workforce-webhooks: a 2xx with an HTML page, not a receiver's answer: is --url the webhook route?",
    );
    expect(code).toBe(1);
  }, 60_000);

  it('at the webhook route of the same app, is accepted with exit 0 and nothing on stderr but the sample', async () => {
    const base = await appWithFallback();

    const { code, out, err } = await send(`${base}/webhooks/workforce`);

    expect(out).toMatch(/^HTTP 202 .*\n\{"received":true\}\n$/);
    expect(err).not.toContain('HTML page');
    expect(code).toBe(0);
  }, 60_000);
});
