// A URL option typed without its scheme (`localhost:3000/webhooks`, as a server prints its address) is a usage
// mistake answered with the URL to write; a user name and password typed in it are never echoed.
import { describe, expect, it } from 'vitest';
import { runCli } from '../../cli/run.js';
import { capture } from './capture.js';

const PASSWORD = 'hunter2-Zq8';

async function run(argv: string[]) {
  const io = capture('', { env: { WORKFORCE_WEBHOOK_SECRET: 'whsec_url_without_scheme' } });
  const code = await runCli(argv, io);
  return { code, out: io.out, err: io.err };
}

describe('an endpoint URL without its scheme', () => {
  it.each([
    ['send', ['send', '--type', 'leave.approved', '--url'], '--url'],
    ['check', ['check', '--url'], '--url'],
    ['mock --deliver-to', ['mock', '--port', '0', '--deliver-to'], '--deliver-to'],
  ])('%s names the URL to write, on one line; exit 2', async (_, argv, option) => {
    for (const [typed, meant] of [
      ['localhost:3000/webhooks/workforce', 'http://localhost:3000/webhooks/workforce'],
      ['127.0.0.1:3000/webhooks/workforce', 'http://127.0.0.1:3000/webhooks/workforce'],
      ['app.example.com/webhooks/workforce', 'http://app.example.com/webhooks/workforce'],
      ['//app.example.com/webhooks/workforce', 'http://app.example.com/webhooks/workforce'],
    ]) {
      const { code, out, err } = await run([...argv, typed!]);
      expect(code).toBe(2);
      expect(out).toBe('');
      expect(err).toBe(
        `workforce-webhooks: error: ${option} has no scheme: write ${meant}, or https://... if the endpoint is served with TLS (see workforce-webhooks ${argv[0]} --help)\n`,
      );
    }
  });

  it('never echoes a password typed in it, with or without //', async () => {
    for (const typed of [
      `user:${PASSWORD}@app.example.com/hook`,
      `//user:${PASSWORD}@app.example.com/hook`,
    ]) {
      const { code, err } = await run(['send', '--type', 'leave.approved', '--url', typed]);
      expect(code).toBe(2);
      expect(err).not.toContain(PASSWORD);
      expect(err).toContain(
        '--url has no scheme: write http://app.example.com/hook, or https://... if the endpoint is served with TLS (and no user name or password: the service sends none)',
      );
    }
  });

  it('keeps "is not a URL" for what no scheme would make one', async () => {
    const { code, err } = await run(['check', '--url', 'webhooks']);
    expect(code).toBe(2);
    expect(err).toContain('--url is not a URL: webhooks');
  });
});

describe('migrate --postgres without its scheme', () => {
  it('names the URL to write; exit 2', async () => {
    const { code, err } = await run(['migrate', '--postgres', 'localhost:5432/app']);
    expect(code).toBe(2);
    expect(err).toBe(
      'workforce-webhooks: error: --postgres has no scheme: write postgres://localhost:5432/app (see workforce-webhooks migrate --help)\n',
    );
  });

  it.each([
    ['user:password@host/db', `app:${PASSWORD}@localhost:5432/app`],
    [
      '//user:password@host/db, which pg would take for a socket path',
      `//app:${PASSWORD}@localhost:5432/app`,
    ],
  ])('never echoes the password of %s; exit 2 before any connection', async (_, typed) => {
    const { code, out, err } = await run(['migrate', '--postgres', typed]);
    expect(err).not.toContain(PASSWORD);
    expect(code).toBe(2);
    expect(out).toBe('');
    expect(err).toContain('--postgres has no scheme: write postgres://***@localhost:5432/app');
  });
});
