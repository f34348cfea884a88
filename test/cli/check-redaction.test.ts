// `check` against an endpoint that redirects to a URL carrying credentials: the redirect is reported, the
// credentials never reach the terminal.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../cli/run.js';
import { capture } from './capture.js';

const SECRET = 'whsec_check_redaction';
const PASSWORD = 'hunter2-sso-password';
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/workforce`;
}

// An endpoint behind a login redirect, as Express's res.redirect answers: the Location, repeated in the body.
const redirectingTo = (location: string) => (_req: IncomingMessage, res: ServerResponse) => {
  res.writeHead(302, { location, 'content-type': 'text/plain' }).end(`Found. Redirecting to ${location}`);
};

async function check(url: string) {
  const io = capture();
  const code = await runCli(['check', '--url', url, '--secret', SECRET, '--timeout-ms', '5000'], io);
  return { code, text: io.out + io.err };
}

describe('check on an endpoint that redirects to a URL with credentials', () => {
  it('reports the redirect with the user name and password of its Location hidden', async () => {
    const { code, text } = await check(
      await serve(redirectingTo(`https://deploy:${PASSWORD}@login.example.com/sso?next=/webhooks`)),
    );
    expect(code).toBe(1);
    expect(text).toContain('302 to https://***@login.example.com/sso?next=/webhooks');
    expect(text).not.toContain(PASSWORD);
    expect(text).not.toContain('deploy:');
  });

  it('hides the credentials of a scheme-relative Location too', async () => {
    const { code, text } = await check(
      await serve(redirectingTo(`//deploy:${PASSWORD}@login.example.com/sso`)),
    );
    expect(code).toBe(1);
    expect(text).toContain('302 to http://***@login.example.com/sso');
    expect(text).not.toContain(PASSWORD);
    expect(text).not.toContain('deploy:');
  });

  it('shows a Location without credentials as the endpoint sent it', async () => {
    const { text } = await check(await serve(redirectingTo('/login?next=/webhooks')));
    expect(text).toContain('302 to /login?next=/webhooks');
  });
});
