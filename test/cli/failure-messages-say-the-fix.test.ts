// A CLI command that fails says why and what to do: a value starting with a dash, a port fetch refuses, an endpoint
// that is not there, speaks the other protocol, has an untrusted certificate, redirects or answers too late, and a
// --redis that is not there.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../cli/run.js';
import { capture } from './capture.js';

const SECRET = 'whsec_failure_messages';

// A self-signed certificate for localhost and 127.0.0.1, valid for a hundred years: an endpoint no client trusts.
const KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgd6/YPLeqKlmtnaX6
S8Xi9i8hIhA2lpc7fFrKmMPjDv+hRANCAAQHIsDyPD8dd8BGhCF5NssMwDg9Tevh
gQn9lkNpfIzI2tJGpGd8lZiSGu/ufb+r+Y1GGig2R1CLyg9ZOvc7BpLV
-----END PRIVATE KEY-----`;
const CERT = `-----BEGIN CERTIFICATE-----
MIIBnDCCAUGgAwIBAgIUfNREzCZp2kW8aW6O51aNOt25mKgwCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJbG9jYWxob3N0MCAXDTI2MTEyNDE3MDIzN1oYDzIxMjYxMDMx
MTcwMjM3WjAUMRIwEAYDVQQDDAlsb2NhbGhvc3QwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAAQHIsDyPD8dd8BGhCF5NssMwDg9TevhgQn9lkNpfIzI2tJGpGd8lZiS
Gu/ufb+r+Y1GGig2R1CLyg9ZOvc7BpLVo28wbTAdBgNVHQ4EFgQUkUhICOqpRzhH
oVsL6K09NCUf6hIwHwYDVR0jBBgwFoAUkUhICOqpRzhHoVsL6K09NCUf6hIwDwYD
VR0TAQH/BAUwAwEB/zAaBgNVHREEEzARgglsb2NhbGhvc3SHBH8AAAEwCgYIKoZI
zj0EAwIDSQAwRgIhANamGeyb3L6yw3b7FbWCTpZnk16Ug5eisVOjRc1YZxf8AiEA
pxlP32Qv5gkvbDzvxppGr5cMiJbgMBODm6xVkHAmuUo=
-----END CERTIFICATE-----`;

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

/** A loopback server, plain or TLS, answering with `answer`; resolves with its port. */
async function serve(
  answer: (req: IncomingMessage, res: ServerResponse) => void,
  tls = false,
): Promise<number> {
  const server: Server = tls ? createTlsServer({ key: KEY, cert: CERT }, answer) : createServer(answer);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanup.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return (server.address() as AddressInfo).port;
}

/** Runs the CLI in-process with the secret in the environment. */
async function cli(args: readonly string[]): Promise<{ code: number; out: string; err: string }> {
  const io = capture('{}', { env: { WORKFORCE_WEBHOOK_SECRET: SECRET } });
  const code = await runCli(args, io);
  return { code, out: io.out, err: io.err };
}

const send = (url: string, ...more: string[]) =>
  cli(['send', '--url', url, '--type', 'webhook.test', ...more]);

describe('an option followed by a value starting with a dash', () => {
  it('sign --timestamp -5 says what --timestamp takes and how to give such a value; exit 2', async () => {
    const { code, out, err } = await cli(['sign', '--timestamp', '-5']);
    expect({ code, out }).toEqual({ code: 2, out: '' });
    expect(err).toMatch(/--timestamp is followed by an argument starting with a dash/);
    expect(err).toContain('it takes unix seconds, a whole number of at most 12 digits');
    expect(err).toContain('--timestamp=<value>');
    expect(err).not.toContain('ambiguous');
    expect(err.trim().split('\n')).toHaveLength(1);
  });

  it('sign --timestamp with no value says what it takes', async () => {
    const { code, err } = await cli(['sign', '--timestamp']);
    expect(code).toBe(2);
    expect(err).toMatch(/--timestamp argument missing: it takes unix seconds/);
  });

  it('send --url followed by another option names --url and does not quote the value', async () => {
    const { code, err } = await cli(['send', '--url', '-whsec_typed_here', '--type', 'webhook.test']);
    expect(code).toBe(2);
    expect(err).toMatch(/--url is followed by an argument starting with a dash/);
    expect(err).not.toContain('whsec_typed_here');
  });
});

describe('a URL on a port fetch refuses is a usage mistake naming the port and the fix', () => {
  it.each([
    ['send', ['send', '--type', 'webhook.test', '--url', 'http://127.0.0.1:6666/hook'], '--url', 6666],
    ['check', ['check', '--url', 'http://localhost:10080/hook'], '--url', 10080],
    [
      'mock --deliver-to',
      ['mock', '--port', '0', '--deliver-to', 'http://127.0.0.1:6667/'],
      '--deliver-to',
      6667,
    ],
  ])('%s', async (_name, args, option, port) => {
    const { code, out, err } = await cli(args);
    expect({ code, out }).toEqual({ code: 2, out: '' });
    expect(err).toContain(`${option}: port ${port} is one fetch refuses to connect to`);
    expect(err).toContain('run the endpoint on another port');
  });

  it('mock --port of such a port is refused before it listens where no client could reach it', async () => {
    const { code, out, err } = await cli(['mock', '--port', '6666']);
    expect({ code, out }).toEqual({ code: 2, out: '' });
    expect(err).toMatch(/--port: port 6666 is one fetch refuses to connect to .*pick another/);
  });
});

describe('send: why there was no answer, with the fix', () => {
  it('nothing listening: start the app or check the port (ECONNREFUSED)', async () => {
    const port = await serve(() => {});
    await cleanup.pop()!();
    const { code, err } = await send(`http://127.0.0.1:${port}/hook`);
    expect(code).toBe(1);
    expect(err).toContain(
      `\nworkforce-webhooks: could not reach http://127.0.0.1:${port}/hook: nothing listens at 127.0.0.1:${port}: start your app, or check the host and port in the URL; error code ECONNREFUSED\n`,
    );
  });

  it('https:// to a plain HTTP server: use http://', async () => {
    const port = await serve((_req, res) => res.end('ok'));
    const { code, err } = await send(`https://127.0.0.1:${port}/hook`);
    expect(code).toBe(1);
    expect(err).toMatch(
      /nothing speaks TLS at 127\.0\.0\.1:\d+: use http:\/\/ .*error code ERR_SSL_WRONG_VERSION_NUMBER\n$/,
    );
  });

  it('http:// to a TLS server: use https://', async () => {
    const port = await serve((_req, res) => res.end('ok'), true);
    const { code, err } = await send(`http://127.0.0.1:${port}/hook`);
    expect(code).toBe(1);
    expect(err).toMatch(/closed without an answer: if the server there is https, use https:\/\//);
  });

  it('a self-signed certificate: not trusted, with what to do about it', async () => {
    const port = await serve((_req, res) => res.end('ok'), true);
    const { code, err } = await send(`https://localhost:${port}/hook`);
    expect(code).toBe(1);
    expect(err).toMatch(
      /TLS certificate is not trusted.*NODE_EXTRA_CA_CERTS=<ca\.pem>; error code DEPTH_ZERO_SELF_SIGNED_CERT\n$/,
    );
  });

  it('a host name that does not resolve', async () => {
    const { code, err } = await send('http://no-such-host.invalid/hook');
    expect(code).toBe(1);
    expect(err).toMatch(/the host name no-such-host\.invalid does not resolve: check its spelling/);
  });

  it('an answer slower than the limit: the service would send it again; answer first, work after', async () => {
    const port = await serve(() => {});
    const { code, err } = await send(`http://127.0.0.1:${port}/hook`, '--timeout-ms', '200');
    expect(code).toBe(1);
    expect(err).toMatch(
      /no answer within 200 ms: the service counts a slower answer as failed .*answer 2xx first/,
    );
  });

  it('a redirect: where to, and that the service does not follow it, so the delivery failed', async () => {
    let followed = 0;
    const port = await serve((req, res) => {
      if (req.url === '/hook') res.writeHead(308, { location: '/hook/' }).end();
      else {
        followed++;
        res.end('ok');
      }
    });
    const { code, out, err } = await send(`http://127.0.0.1:${port}/hook`);
    expect({ code, followed }).toEqual({ code: 1, followed: 0 });
    expect(out).toMatch(/^HTTP 308 /);
    expect(err).toContain(
      'a redirect to /hook/: the service does not follow redirects, so this delivery failed (spec rule 5)',
    );
  });
});

describe('dead-letters: why Redis was not reached, with the fix, without the password', () => {
  it('nothing listening at --redis: start Redis or fix the host and port (ECONNREFUSED)', async () => {
    const port = await serve(() => {});
    await cleanup.pop()!();
    const { code, err } = await cli([
      'dead-letters',
      'list',
      '--queue',
      'workforce-webhooks',
      '--redis',
      `redis://:hunter2-password@127.0.0.1:${port}`,
    ]);
    expect(code).toBe(1);
    expect(err).toBe(
      `workforce-webhooks: error: cannot reach Redis at --redis (127.0.0.1:${port}): nothing listens there; start Redis, or fix the host and port in --redis; error code ECONNREFUSED\n`,
    );
  });

  it('a --redis host name that does not resolve', async () => {
    const { code, err } = await cli([
      'dead-letters',
      'list',
      '--queue',
      'workforce-webhooks',
      '--redis',
      'redis://no-such-host.invalid:6379',
    ]);
    expect(code).toBe(1);
    expect(err).toMatch(
      /\(no-such-host\.invalid:6379\): the host name no-such-host\.invalid does not resolve/,
    );
  });
});
