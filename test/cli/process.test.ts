// The real CLI as a child process: --version, the secret from the environment, sample data, check's failure
// details and marker, and `mock --deliver-to` driven from standard input.
import { once } from 'node:events';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { createReceiver, type WorkforceEvent } from 'workforce-webhooks';
import { createExpressMiddleware } from 'workforce-webhooks/express';
import { createNodeHandler } from 'workforce-webhooks/node';
import { root } from '../support/packed.js';
import { type CliProcess, runCliProcess, startCli } from './cli-process.js';

const SECRET = 'whsec_process_test';
const CALENDAR = /^\d{4}-\d{2}-\d{2}T00:00:00$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

/** The environment of a user's shell: no secret unless the test gives one. */
function env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const out = { ...process.env, ...extra };
  if (!('WORKFORCE_WEBHOOK_SECRET' in extra)) delete out.WORKFORCE_WEBHOOK_SECRET;
  return out;
}

/** The CLI left running, killed after the test. */
function start(args: readonly string[], extra: Record<string, string> = {}): CliProcess {
  const child = startCli(args, env(extra));
  cleanup.push(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  return child;
}

/** Runs the CLI to its end. */
const run = (args: readonly string[], extra: Record<string, string> = {}) => runCliProcess(args, env(extra));

/** A real receiver on node:http, recording every event its handlers see. */
async function receiverUrl(secret = SECRET): Promise<{ url: string; events: WorkforceEvent[] }> {
  const events: WorkforceEvent[] = [];
  const receiver = createReceiver({ secret, mode: 'inline' }).onAny((event) => {
    events.push(event as WorkforceEvent);
  });
  const server = createServer(createNodeHandler(receiver));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`, events };
}

describe('--version and --help', () => {
  it('prints the package version', async () => {
    const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
    expect(await run(['--version'])).toMatchObject({ code: 0, out: `${version}\n` });
  });

  it.each(['sign', 'send', 'check', 'mock'])(
    '%s --help names WORKFORCE_WEBHOOK_SECRET and the shell-history risk',
    async (name) => {
      const { code, out } = await run([name, '--help']);
      expect(code).toBe(0);
      expect(out).toContain('$WORKFORCE_WEBHOOK_SECRET');
      expect(out).toMatch(/on the command line lands in\s+your shell history/);
    },
  );
});

describe('send', () => {
  it('takes the secret from WORKFORCE_WEBHOOK_SECRET and sends leave.approved with its seven sample fields', async () => {
    const { url, events } = await receiverUrl();
    const { code, out, err } = await run(['send', '--url', url, '--type', 'leave.approved'], {
      WORKFORCE_WEBHOOK_SECRET: SECRET,
    });
    expect(err).toContain('Sending sample data');
    expect(code).toBe(0);
    expect(out).toMatch(/^HTTP 200 /);
    const data = events[0]!.data as Record<string, string>;
    expect(Object.keys(data).sort()).toEqual(
      ['employeeId', 'endDate', 'leaveRequestId', 'leaveType', 'leaveTypeId', 'startDate', 'status'].sort(),
    );
    expect(data).toMatchObject({
      leaveRequestId: expect.stringMatching(UUID),
      employeeId: expect.stringMatching(UUID),
      leaveTypeId: expect.stringMatching(UUID),
      leaveType: expect.any(String),
      startDate: expect.stringMatching(CALENDAR),
      endDate: expect.stringMatching(CALENDAR),
      status: 'Approved',
    });
    expect(data.startDate! <= data.endDate!).toBe(true);
  });

  it('sends attendance.absence_report.completed with a reportId, and --data-file or --data instead of the sample', async () => {
    const { url, events } = await receiverUrl();
    const secretEnv = { WORKFORCE_WEBHOOK_SECRET: SECRET };
    expect(
      (await run(['send', '--url', url, '--type', 'attendance.absence_report.completed'], secretEnv)).code,
    ).toBe(0);
    expect(events[0]!.data).toEqual({ reportId: expect.stringMatching(UUID) });
    const file = join(tmpdir(), `wfwh-data-${process.pid}.json`);
    writeFileSync(file, '{"reportId":"00000000-0000-4000-8000-000000000042","reportDate":"2026-06-12"}');
    cleanup.push(() => rmSync(file, { force: true }));
    const args = ['send', '--url', url, '--type', 'attendance.absence_report.completed'];
    expect((await run([...args, '--data-file', file], secretEnv)).code).toBe(0);
    expect(events[1]!.data).toEqual({
      reportId: '00000000-0000-4000-8000-000000000042',
      reportDate: '2026-06-12',
    });
    expect((await run([...args, '--data', '{"reportId":"x"}'], secretEnv)).code).toBe(0);
    expect(events[2]!.data).toEqual({ reportId: 'x' });
    const both = await run([...args, '--data', '{}', '--data-file', file], secretEnv);
    expect(both.code).toBe(2);
    expect(both.err).toContain('give --data or --data-file, not both');
  });

  it('--secret wins over the environment; neither is a usage error naming both', async () => {
    const { url, events } = await receiverUrl();
    const args = ['send', '--url', url, '--type', 'webhook.test'];
    const given = await run([...args, '--secret', SECRET], { WORKFORCE_WEBHOOK_SECRET: 'whsec_wrong' });
    expect(given.code).toBe(0);
    expect(events).toHaveLength(1);
    const none = await run(args);
    expect(none.code).toBe(2);
    expect(none.err).toContain('--secret (or $WORKFORCE_WEBHOOK_SECRET) is required');
  });
});

describe('check', () => {
  it('prints status, body and the secret hint when the endpoint refuses a valid delivery with signature_mismatch', async () => {
    const { url } = await receiverUrl('whsec_the_endpoints_own');
    const { code, out } = await run(['check', '--url', url, '--timeout-ms', '8000'], {
      WORKFORCE_WEBHOOK_SECRET: SECRET,
    });
    expect(code).toBe(1);
    expect(out).toContain('Failures:');
    expect(out).toContain('answer: 400 {"error":"signature_mismatch"}');
    expect(out).toContain("hint:   is --secret this endpoint's secret?");
  });

  it('prints the fix when a body parser ran first (500 raw_body_unavailable)', async () => {
    const receiver = createReceiver({ secret: SECRET, mode: 'inline' });
    const app = express().use(express.json()).post('/webhooks', createExpressMiddleware(receiver));
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    cleanup.push(() => new Promise((resolve) => server.close(resolve)));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
    const { code, out } = await run(['check', '--url', url, '--secret', SECRET, '--timeout-ms', '8000']);
    expect(code).toBe(1);
    expect(out).toContain('answer: 500 {"error":"raw_body_unavailable"}');
    expect(out).toContain('Register the webhook route before any body parser');
    expect(out).toContain('app.use(express.json())');
  });

  it("marks its deliveries, so the endpoint's onAny handlers can tell them apart", async () => {
    const { url, events } = await receiverUrl();
    const { code } = await run(['check', '--url', url, '--timeout-ms', '8000'], {
      WORKFORCE_WEBHOOK_SECRET: SECRET,
    });
    expect(code).toBe(0);
    expect(events.length).toBeGreaterThanOrEqual(3);
    expect(events.every((event) => 'workforceWebhooksCheck' in (event.data as object))).toBe(true);
  });
});

describe('mock --deliver-to', () => {
  it('delivers the leave approvals and absence reports typed on standard input, with ids it printed', async () => {
    const { url, events } = await receiverUrl();
    const child = start(['mock', '--port', '0', '--today', '2026-06-15', '--deliver-to', url], {
      WORKFORCE_WEBHOOK_SECRET: SECRET,
    });
    await expect.poll(() => child.out(), { timeout: 15_000 }).toContain('Commands (type one');
    const out = child.out();
    expect(out).toContain('signed with the secret from $WORKFORCE_WEBHOOK_SECRET');
    expect(out).not.toContain(SECRET);
    const awaiting = /leave awaiting a decision\s+(\S+)/.exec(out)![1]!;
    expect(awaiting).toMatch(UUID);
    const baseUrl = /base URL\s+(\S+)/.exec(out)![1]!;
    const key = /full\s+(\S+)/.exec(out)![1]!;

    child.stdin.write(`approve ${awaiting}\n`);
    await expect.poll(() => events.map((e) => e.type), { timeout: 10_000 }).toEqual(['leave.approved']);
    expect(events[0]!.data).toMatchObject({
      leaveRequestId: awaiting,
      status: 'Approved',
      startDate: expect.stringMatching(CALENDAR),
    });
    await expect
      .poll(() => child.out(), { timeout: 10_000 })
      .toMatch(/-> leave\.approved \(event .*\): 200 in \d+ ms/);

    child.stdin.write('report\n');
    await expect.poll(() => events.length, { timeout: 10_000 }).toBe(2);
    expect(events[1]!.type).toBe('attendance.absence_report.completed');
    const { reportId } = events[1]!.data as { reportId: string };
    // The id is the {id} of the report endpoint, served by the same mock.
    const report = await fetch(`${baseUrl}/v1/attendance/report/${reportId}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(await report.json()).toMatchObject({
      isSuccessful: true,
      data: { reportId, reportDate: '2026-06-15' },
    });

    child.stdin.write('cancel\nnonsense\n');
    await expect.poll(() => events.length, { timeout: 10_000 }).toBe(3);
    expect(events[2]!.type).toBe('leave.cancelled');
    await expect.poll(() => child.out(), { timeout: 10_000 }).toContain('! unknown command "nonsense"');

    child.kill('SIGTERM');
    const [exitCode] = (await once(child, 'close')) as [number];
    expect(exitCode).toBe(0);
  });

  it('prints a new secret when none is given, and refuses a URL that is not http(s)', async () => {
    const { url } = await receiverUrl();
    const child = start(['mock', '--port', '0', '--deliver-to', url]);
    await expect.poll(() => child.out(), { timeout: 15_000 }).toMatch(/a new secret: whsec_\S+/);
    child.kill('SIGTERM');
    await once(child, 'close');
    const wrong = await run(['mock', '--port', '0', '--deliver-to', 'ftp://x']);
    expect(wrong.code).toBe(2);
    expect(wrong.err).toContain('--deliver-to must be an http(s) URL');
  });
});
