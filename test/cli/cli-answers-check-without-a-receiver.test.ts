// `check` at a URL where no receiver answers (nothing listens, a 404 for every path, an app's HTML page, no answer in
// time): every row that needs the receiver's answer fails, "no 3xx anywhere" included, the cause is told once, exit 1.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../cli/run.js';
import { createExampleApp } from '../../examples/express/server.js';
import { capture } from './capture.js';
import { serveEndpoint } from './endpoint.js';

const SECRET = 'whsec_check_without_a_receiver';

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** The Express example on loopback, with `fallback` (if any) answering every other path; resolves with its base URL. */
async function example(fallback?: (res: { send: (body: string) => void }) => void): Promise<string> {
  const { app, receiver } = createExampleApp({ secret: SECRET, log: () => {} });
  if (fallback !== undefined) app.use((_req, res) => fallback(res));
  const server: Server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  closers.push(async () => {
    await receiver.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function check(url: string, ...extra: string[]) {
  const io = capture();
  const code = await runCli(['check', '--url', url, '--secret', SECRET, ...extra], io);
  const rows = io.out.split('\n').filter((line) => /^(PASS|FAIL) /.test(line));
  return { code, out: io.out, rows };
}

const occurrences = (text: string, part: string): number => text.split(part).length - 1;

describe('check where no receiver answers', () => {
  it('with nothing listening, fails all seven rows, "no 3xx anywhere" too, and names the cause once', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise((resolve) => probe.close(resolve));

    const { code, out, rows } = await check(`http://127.0.0.1:${port}/webhooks/workforce`);

    expect(rows).toHaveLength(7);
    expect(rows.filter((row) => row.startsWith('PASS'))).toEqual([]);
    expect(rows.at(-1)).toMatch(/^FAIL +no 3xx anywhere +not known +/);
    expect(out).toContain(
      `trailing slash, no 3xx (7 checks, one cause):\n  no answer: nothing listens at 127.0.0.1:${port}`,
    );
    expect(occurrences(out, 'nothing listens')).toBe(1);
    expect(out).toContain('7 of 7 checks failed.');
    expect(code).toBe(1);
  });

  it('at a path the app has no route for (its 404), fails every row with the 404 and asks for the webhook route', async () => {
    const base = await example();

    const { code, out, rows } = await check(`${base}/webhooks`);

    expect(rows.filter((row) => row.startsWith('PASS'))).toEqual([]);
    expect(rows.find((row) => row.includes('no redirect for /webhooks/'))).toMatch(/^FAIL /);
    expect(out).toContain('trailing slash, no 3xx (7 checks, one cause):\n  answer: 404 ');
    expect(occurrences(out, 'is --url the webhook route')).toBe(1);
    expect(code).toBe(1);
  });

  it("at a path an app answers with its HTML page (a single-page app's fallback), passes no row", async () => {
    const base = await example((res) =>
      res.send('<!DOCTYPE html>\n<html lang="en"><div id="root"></div></html>'),
    );

    const { code, out, rows } = await check(`${base}/hooks/workforce`);

    expect(rows.filter((row) => row.startsWith('PASS'))).toEqual([]);
    expect(rows[0]).toMatch(/^FAIL +valid delivery answered 2xx .* 200 in \d+ ms +/);
    // Not "accepted a forged signature": the page is no receiver's answer to judge.
    expect(out).not.toContain('accepted a forged signature');
    expect(out).toContain('(7 checks, one cause):\n  answer: 200 (');
    expect(occurrences(out, 'HTML page')).toBe(1);
    expect(out).not.toContain('id="root"');
    expect(code).toBe(1);
  });

  it('that never answers, fails "no 3xx anywhere" with the rest, each delivery given up at --timeout-ms', async () => {
    const url = await serveEndpoint(() => {}, '/webhooks/workforce', closers);

    const { code, out, rows } = await check(url, '--timeout-ms', '1500');

    expect(rows).toHaveLength(7);
    expect(rows.filter((row) => row.startsWith('PASS'))).toEqual([]);
    expect(out).toContain('(7 checks, one cause):\n  no answer within 1500 ms');
    expect(code).toBe(1);
  }, 60_000);

  it('behind a login that answers 401 to every request, passes no row and names the login once', async () => {
    const url = await serveEndpoint(
      (_req, res) =>
        res.writeHead(401, { 'www-authenticate': 'Basic realm="preview"' }).end('Authentication required'),
      '/webhooks/workforce',
      closers,
    );

    const { code, out, rows } = await check(url);

    expect(rows.filter((row) => row.startsWith('PASS'))).toEqual([]);
    expect(out).toContain('trailing slash, no 3xx (7 checks, one cause):\n  answer: 401 ');
    expect(occurrences(out, 'something in front of the receiver asks for credentials')).toBe(1);
    expect(code).toBe(1);
  });

  it('at the receiver itself, still passes every row', async () => {
    const base = await example((res) => res.send('<!doctype html><html></html>'));

    const { code, rows } = await check(`${base}/webhooks/workforce`);

    expect(rows).toHaveLength(7);
    expect(rows.filter((row) => row.startsWith('FAIL'))).toEqual([]);
    expect(rows.at(-1)).toMatch(/^PASS +no 3xx anywhere +none/);
    expect(code).toBe(0);
  });
});
