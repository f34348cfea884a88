// The CLI in-process (sign, send, mock, help, errors) and once as a real process.
import { execFileSync, spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { createReceiver } from 'workforce-webhooks';
import { createExpressMiddleware } from 'workforce-webhooks/express';
import { runCli } from '../../cli/run.js';
import { capture } from './capture.js';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

describe('sign', () => {
  it('prints the header for the exact stdin bytes, equal to openssl', async () => {
    const body = '{"id":"x"}\n';
    const io = capture(body);
    expect(await runCli(['sign', '--secret', 'whsec_cli', '--timestamp', '1700000000'], io)).toBe(0);
    const expected = execFileSync('openssl', ['dgst', '-sha256', '-hmac', 'whsec_cli'], {
      input: `1700000000.${body}`,
    })
      .toString()
      .trim()
      .split(' ')
      .at(-1);
    expect(io.out).toBe(`t=1700000000,v1=${expected}\n`);
  });

  it('refuses a timestamp that is not a whole number', async () => {
    const io = capture('{}');
    expect(await runCli(['sign', '--secret', 'whsec_cli', '--timestamp', 'soon'], io)).toBe(2);
    expect(io.err).toBe(
      'workforce-webhooks: error: --timestamp must be a whole number, got "soon" (see workforce-webhooks sign --help)\n',
    );
  });
});

describe('send', () => {
  it('sends one signed delivery to a real receiver and prints the answer', async () => {
    const secret = 'whsec_cli';
    const seen: unknown[] = [];
    const receiver = createReceiver({ secret, mode: 'inline' }).on('leave.approved', (event) => {
      seen.push(event.data);
    });
    const app = express().post('/hooks', createExpressMiddleware(receiver));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    cleanup.push(() => new Promise((resolve) => server.close(resolve)));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
    const io = capture();
    const data = '{"leaveRequestId":"00000000-0000-4000-8000-000000000009","status":"Approved"}';
    expect(
      await runCli(
        ['send', '--url', url, '--secret', secret, '--type', 'leave.approved', '--data', data],
        io,
      ),
    ).toBe(0);
    expect(io.out).toMatch(/^HTTP 200 in \d+ ms \(event [0-9a-f-]{36}\)\n\{"received":true\}\n$/);
    expect(seen).toEqual([JSON.parse(data)]);
    const wrong = capture();
    expect(
      await runCli(['send', '--url', url, '--secret', 'whsec_other', '--type', 'leave.approved'], wrong),
    ).toBe(1);
    expect(wrong.out).toMatch(/^HTTP 400 in \d+ ms/);
  });

  it('says in one line when the endpoint cannot be reached or --data is not JSON', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    const io = capture();
    const args = ['send', '--url', `http://127.0.0.1:${port}/`, '--secret', 's', '--type', 'webhook.test'];
    expect(await runCli(args, io)).toBe(1);
    expect(io.err).toMatch(/\nworkforce-webhooks: could not reach .*ECONNREFUSED\n$/);
    const bad = capture();
    expect(await runCli([...args, '--data', '{nope'], bad)).toBe(2);
    expect(bad.err.split('\n')).toHaveLength(2);
  });
});

describe('mock', () => {
  it('prints its base URL and keys, serves the API until stopped', async () => {
    const controller = new AbortController();
    const io = capture('', { signal: controller.signal });
    const running = runCli(['mock', '--port', '0', '--today', '2026-06-15'], io);
    await expect.poll(() => io.out).toContain('otherOrganization');
    const baseUrl = /base URL\s+(\S+)/.exec(io.out)![1]!;
    const key = /full\s+(\S+)/.exec(io.out)![1]!;
    const response = await fetch(`${baseUrl}/v1/leavetype/list`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect((await response.json()).isSuccessful).toBe(true);
    controller.abort();
    expect(await running).toBe(0);
    await expect(fetch(`${baseUrl}/v1/leavetype/list`)).rejects.toThrow();
  });
});

describe('help and errors', () => {
  it.each([[[]], [['--help']], [['help']]])('prints the overview for %j', async (argv) => {
    const io = capture();
    expect(await runCli(argv, io)).toBe(0);
    expect(io.out).toContain('Commands:');
  });

  it.each(['sign', 'send', 'check', 'mock'])('%s --help prints its usage', async (name) => {
    const io = capture();
    expect(await runCli([name, '--help'], io)).toBe(0);
    expect(io.out).toMatch(new RegExp(`^Usage: workforce-webhooks ${name}`));
    const viaHelp = capture();
    await runCli(['help', name], viaHelp);
    expect(viaHelp.out).toBe(io.out);
  });

  it.each([
    [['nope'], /unknown command "nope"/],
    [['check', '--secret', 's'], /--url is required/],
    [['check', '--url', 'not a url', '--secret', 's'], /--url is not a URL/],
    [['send', '--url', 'http://x', '--secret', 's', '--bogus'], /Unknown option '--bogus'/],
    [['check', '--url', 'http://x', '--secret', 's', '--timeout-ms', '1.5'], /must be a whole number/],
  ])('%j is one clear line and exit 2', async (argv, message) => {
    const io = capture();
    expect(await runCli(argv, io)).toBe(2);
    expect(io.err).toMatch(message);
    expect(io.err.trim().split('\n')).toHaveLength(1);
    expect(io.out).toBe('');
  });

  it('runs as a real process with a non-zero exit on a mistake', () => {
    const cli = ['--import', 'tsx', 'cli/index.ts'];
    const help = spawnSync(process.execPath, [...cli, '--help'], { encoding: 'utf8' });
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('Usage: workforce-webhooks <command>');
    const env = { ...process.env };
    delete env.WORKFORCE_WEBHOOK_SECRET;
    const wrong = spawnSync(process.execPath, [...cli, 'sign'], { encoding: 'utf8', input: '{}', env });
    expect(wrong.status).toBe(2);
    expect(wrong.stderr).toBe(
      'workforce-webhooks: error: --secret (or $WORKFORCE_WEBHOOK_SECRET) is required (see workforce-webhooks sign --help)\n',
    );
  });
});
