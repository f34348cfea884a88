// `check` when many deliveries fail for one cause (a wrong secret, nothing listening, a login redirect in front): the
// cause and its fix are printed once, naming the checks it failed, and each failing row stays one short line.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createReceiver } from 'workforce-webhooks';
import { createNodeHandler } from 'workforce-webhooks/node';
import { runCli } from '../../cli/run.js';
import { capture } from './capture.js';
import { serveEndpoint } from './endpoint.js';

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function check(url: string, secret: string) {
  const io = capture();
  const code = await runCli(['check', '--url', url, '--secret', secret, '--timeout-ms', '8000'], io);
  const rows = io.out.split('\n').filter((line) => /^(PASS|FAIL) /.test(line));
  return { code, out: io.out, failing: rows.filter((line) => line.startsWith('FAIL')) };
}

const occurrences = (text: string, part: string): number => text.split(part).length - 1;

describe('check tells a cause many failures share once', () => {
  it("prints a wrong secret's signature_mismatch and its hint once, the failing rows short", async () => {
    const receiver = createReceiver({ secret: 'whsec_the_endpoints_own', logger: false }).onAny(() => {});
    closers.push(() => receiver.close());
    const server = createServer(createNodeHandler(receiver));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => server.close(resolve)));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/workforce`;

    const { code, out, failing } = await check(url, 'whsec_not_this_one');

    expect(code).toBe(1);
    // The three deliveries a receiver must accept, all refused for the secret.
    expect(failing).toHaveLength(3);
    for (const row of failing) {
      expect(row).toMatch(/: see the cause below$/);
      expect(row.length).toBeLessThan(140);
    }
    expect(out).toContain(
      'valid delivery, same event again, unknown type (3 checks, one cause):\n  answer: 400 {"error":"signature_mismatch"}\n  hint:   is --secret this endpoint\'s secret?',
    );
    expect(occurrences(out, 'signature_mismatch')).toBe(1);
    expect(occurrences(out, 'is --secret this endpoint')).toBe(1);
    expect(out).toContain('3 of 7 checks failed.');
  });

  it('prints "nothing listens" and its fix once when the app is not running', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise((resolve) => probe.close(resolve));

    const { code, out, failing } = await check(`http://127.0.0.1:${port}/webhooks/workforce`, 'whsec_x');

    expect(code).toBe(1);
    expect(failing).toHaveLength(7);
    for (const row of failing)
      expect(row).toMatch(/(no answer|not known) {2}expected .*: see the cause below$/);
    expect(occurrences(out, `nothing listens at 127.0.0.1:${port}`)).toBe(1);
    expect(out).toContain(
      `trailing slash, no 3xx (7 checks, one cause):\n  no answer: nothing listens at 127.0.0.1:${port}: start your app, or check the host and port in the URL; error code ECONNREFUSED`,
    );
  });

  it('names the target of a redirect in front of every delivery once', async () => {
    const login = 'https://login.example.com/sso?next=%2Fwebhooks';
    const url = await serveEndpoint(
      (_req, res) => res.writeHead(302, { location: login }).end(),
      '/webhooks/workforce',
      closers,
    );

    const { code, out, failing } = await check(url, 'whsec_x');

    expect(code).toBe(1);
    expect(failing).toHaveLength(7);
    expect(failing.at(-1)).toMatch(
      /no 3xx anywhere +6 redirect\(s\) +every delivery: 302 to https:\/\/login\.example\.com\/sso\?next=%2Fwebhooks: redirects are not followed/,
    );
    // Once in the last row, once as the shared cause.
    expect(occurrences(out, login)).toBe(2);
    expect(out).toContain('(6 checks, one cause):\n  answer: 302 to https://login.example.com/sso');
  });

  it('keeps each rule on its own row when the failures are acceptances, not refusals', async () => {
    const url = await serveEndpoint(
      (_req, res) => res.writeHead(202).end('{"received":true}'),
      '/webhooks/workforce',
      closers,
    );

    const { code, out, failing } = await check(url, 'whsec_x');

    expect(code).toBe(1);
    // The same 202 to a forged and to a stale signature: each breaks its own rule, told on its own row.
    expect(failing).toHaveLength(2);
    expect(failing[0]).toMatch(/accepted a forged signature/);
    expect(failing[1]).toMatch(/accepted a signature an hour old/);
    expect(out).not.toContain('one cause');
  });
});
