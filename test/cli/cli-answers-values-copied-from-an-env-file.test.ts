// A secret copied from a .env file with its quotes, or with a stray \r or space: send and check say so before the
// receiver's bare signature_mismatch, without printing the secret; one of only whitespace, or a quoted URL, is a usage
// error that names the fix.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createExampleApp } from '../../examples/express/server.js';
import { runCliProcess } from './cli-process.js';

const SECRET = 'whsec_secret_from_an_env_file';

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** The Express example on loopback, verifying with SECRET; resolves with its webhook URL. */
async function example(): Promise<string> {
  const { app, receiver } = createExampleApp({ secret: SECRET, log: () => {} });
  const server: Server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  closers.push(async () => {
    await receiver.close();
    await new Promise((resolve) => server.close(resolve));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/workforce`;
}

const send = (url: string, env: Record<string, string>, ...extra: string[]) =>
  runCliProcess(['send', '--url', url, '--type', 'leave.approved', ...extra], { ...process.env, ...env });

describe('a secret as copied from a .env file', () => {
  it('in $WORKFORCE_WEBHOOK_SECRET with its quotes: send warns of the quotes, then shows the refusal', async () => {
    const url = await example();

    const { code, out, err } = await send(url, { WORKFORCE_WEBHOOK_SECRET: `"${SECRET}"` });

    expect(out).toMatch(/^HTTP 400 .*\n\{"error":"signature_mismatch"\}\n$/);
    expect(err).toContain(
      'workforce-webhooks: warning: $WORKFORCE_WEBHOOK_SECRET is wrapped in quotes (as copied from a .env file)',
    );
    expect(err).toContain('remove the quotes where the value is set');
    expect(err + out).not.toContain(SECRET);
    expect(code).toBe(1);
  }, 60_000);

  it('after --secret with a Windows line end: check warns of the whitespace once', async () => {
    const url = await example();

    const { code, out, err } = await runCliProcess(
      ['check', '--url', url, '--secret', `${SECRET}\r`, '--timeout-ms', '8000'],
      { ...process.env, WORKFORCE_WEBHOOK_SECRET: '' },
    );

    expect(err.split('--secret has leading or trailing whitespace').length - 1).toBe(1);
    expect(err + out).not.toContain(SECRET);
    expect(code).toBe(1);
  }, 60_000);

  it('as given, with neither, is accepted with no warning', async () => {
    const url = await example();

    const { code, out, err } = await send(url, { WORKFORCE_WEBHOOK_SECRET: SECRET });

    expect(out).toMatch(/^HTTP 202 /);
    expect(err).not.toContain('warning');
    expect(code).toBe(0);
  }, 60_000);

  it('of only whitespace: a usage error naming where it came from, nothing sent', async () => {
    const url = await example();

    const { code, out, err } = await send(url, { WORKFORCE_WEBHOOK_SECRET: ' \r' });

    expect(err).toContain('workforce-webhooks: error: $WORKFORCE_WEBHOOK_SECRET is only whitespace');
    expect(out).toBe('');
    expect(code).toBe(2);
  }, 60_000);

  it('a --url with its quotes: a usage error saying to remove them, nothing sent', async () => {
    const url = await example();

    const { code, out, err } = await send(`"${url}"`, { WORKFORCE_WEBHOOK_SECRET: SECRET });

    expect(err).toBe(
      `workforce-webhooks: error: --url is wrapped in quotes (kept from a .env file?): remove them, as in ${url} (see workforce-webhooks send --help)\n`,
    );
    expect(out).toBe('');
    expect(code).toBe(2);
  }, 60_000);
});
