// `send` and `check` through a proxy whose app behind it is down: its 502 is the proxy's, not the receiver's, so check
// passes no row on it and both say to look at the app behind the proxy.
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../cli/run.js';
import { capture } from './capture.js';

const SECRET = 'whsec_behind_a_gateway';

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A port where nothing listens: the app behind the proxy, not running. */
async function downPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** A reverse proxy on loopback to `upstream`, answering 502 with its HTML page when it cannot reach it, as nginx does. */
async function proxyTo(upstream: number): Promise<string> {
  const proxy = createServer((req, res) => {
    const forward = request(
      { host: '127.0.0.1', port: upstream, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => {
      res
        .writeHead(502, { 'content-type': 'text/html' })
        .end(
          '<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center></body></html>',
        );
    });
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  closers.push(() => {
    proxy.closeAllConnections();
    return new Promise((resolve) => proxy.close(resolve));
  });
  return `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/webhooks/workforce`;
}

const HINT =
  'a proxy or platform in front of the receiver answered, not the receiver: is the app behind it running';

describe('a proxy in front whose app is down', () => {
  it('check fails every row, "no redirect" and "no 3xx anywhere" too, and names the proxy once', async () => {
    const url = await proxyTo(await downPort());

    const io = capture();
    const code = await runCli(['check', '--url', url, '--secret', SECRET, '--timeout-ms', '8000'], io);

    const rows = io.out.split('\n').filter((line) => /^(PASS|FAIL) /.test(line));
    expect(rows).toHaveLength(7);
    expect(rows.filter((row) => row.startsWith('PASS'))).toEqual([]);
    expect(io.out).toContain('trailing slash, no 3xx (7 checks, one cause):\n  answer: 502 (');
    expect(io.out.split(HINT).length - 1).toBe(1);
    expect(io.out).not.toContain('Bad Gateway');
    expect(code).toBe(1);
  });

  it('send prints the 502 and says to look at the app behind the proxy', async () => {
    const url = await proxyTo(await downPort());

    const io = capture('', { env: { WORKFORCE_WEBHOOK_SECRET: SECRET } });
    const code = await runCli(['send', '--url', url, '--type', 'leave.approved'], io);

    expect(io.out).toMatch(/^HTTP 502 /);
    expect(io.err).toContain(`workforce-webhooks: ${HINT}`);
    expect(code).toBe(1);
  });
});
