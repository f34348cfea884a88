// Usage mistakes are exit 2 with one line and one prefix, never echo a secret, and are caught before anything is
// sent; `mock --deliver-to` shows a failed delivery as failed and stops at once on Ctrl-C.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createMockService } from 'workforce-webhooks/testing';
import { retryPrinter } from '../../cli/mock-console.js';
import { runCli } from '../../cli/run.js';
import { redisUrl, uniqueName } from '../setup/redis-helpers.js';
import { capture } from './capture.js';
import { type CliProcess, startCli } from './cli-process.js';

const SECRET = 'whsec_usage_faults';
const DOUBLED = 'workforce-webhooks: error: workforce-webhooks:';

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

/** A loopback endpoint that counts what arrives and answers with `answer` (or never, when it does nothing). */
async function endpoint(
  answer: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.writeHead(200).end('ok'),
): Promise<{ url: string; arrived: () => number }> {
  let arrived = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      arrived++;
      answer(req, res);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanup.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, arrived: () => arrived };
}

/** Runs the CLI in-process with the secret in the environment; resolves with the exit code and what it printed. */
async function cli(argv: readonly string[]): Promise<{ code: number; out: string; err: string }> {
  const io = capture('', { env: { WORKFORCE_WEBHOOK_SECRET: SECRET } });
  const code = await runCli(argv, io);
  return { code, out: io.out, err: io.err };
}

/** The CLI as a real process, the secret in its environment; killed after the test when still running. */
function start(args: readonly string[]): CliProcess {
  const child = startCli(args, { ...process.env, WORKFORCE_WEBHOOK_SECRET: SECRET });
  cleanup.push(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return child;
}

describe("mistakes the library catches are usage mistakes: exit 2, the package's prefix once", () => {
  it('sign --timestamp of more than 12 digits', async () => {
    const { code, err } = await cli(['sign', '--timestamp', '1234567890123']);
    expect({ code, err }).toEqual({
      code: 2,
      err: expect.stringMatching(
        /^workforce-webhooks: error: --timestamp must be unix seconds of at most 12 digits/,
      ),
    });
  });

  it('migrate --table that is not a table name, before any connection is tried', async () => {
    const { code, err } = await cli([
      'migrate',
      '--postgres',
      'postgres://user@127.0.0.1:1/db',
      '--table',
      'x; drop table y',
    ]);
    expect(err).not.toContain(DOUBLED);
    expect({ code, err }).toEqual({
      code: 2,
      err: expect.stringMatching(/--table must be a name or schema\.name/),
    });
  });

  it.skipIf(!redisUrl)('dead-letters list --cursor that no page printed', async () => {
    const { code, err } = await cli([
      'dead-letters',
      'list',
      '--redis',
      redisUrl,
      '--queue',
      uniqueName('cli-cursor'),
      '--cursor',
      'garbage',
    ]);
    expect(err).not.toContain(DOUBLED);
    expect({ code, err }).toEqual({
      code: 2,
      err: expect.stringMatching(/--cursor is not one this queue gave/),
    });
  });
});

describe('send and check refuse, before anything is sent, what the service would never send', () => {
  it.each([
    [
      '--timeout-ms past the service limit',
      ['--timeout-ms', '3000000000'],
      /--timeout-ms must be 1 to 10000/,
    ],
    ['--timeout-ms 0', ['--timeout-ms', '0'], /--timeout-ms must be 1 to 10000/],
    ['--id that is not a uuid (spec: id is a uuid)', ['--id', 'not-a-uuid'], /--id must be a uuid/],
    ['--type a header cannot carry', ['--type', 'leave.✓'], /--type must be printable ASCII without spaces/],
    ['--type with a space', ['--type', 'leave approved'], /--type must be printable ASCII/],
  ])('send %s: exit 2, nothing arrives', async (_name, extra, message) => {
    const { url, arrived } = await endpoint();
    const { code, out, err } = await cli(['send', '--url', url, '--type', 'webhook.test', ...extra]);
    expect({ code, out, arrived: arrived() }).toEqual({ code: 2, out: '', arrived: 0 });
    expect(err).toMatch(message);
    expect(err).not.toMatch(/could not reach|no answer within/);
  });

  it('send --id with a uuid sends the event under that id', async () => {
    const { url } = await endpoint();
    const id = crypto.randomUUID();
    const { code, out } = await cli(['send', '--url', url, '--type', 'webhook.test', '--id', id]);
    expect(code).toBe(0);
    expect(out).toContain(`(event ${id})`);
  });

  it.each([
    ['send', ['send', '--type', 'webhook.test', '--url']],
    ['check', ['check', '--timeout-ms', '500', '--url']],
  ])('%s --url of a scheme other than http(s) is exit 2, not a failed request', async (_name, argv) => {
    const { code, out, err } = await cli([...argv, 'ftp://127.0.0.1:1/hook']);
    expect({ code, out }).toEqual({ code: 2, out: '' });
    expect(err).toMatch(/--url must be an http\(s\) URL/);
  });

  it('check --type a header cannot carry is exit 2 before any check runs', async () => {
    const { url, arrived } = await endpoint();
    const { code, out } = await cli(['check', '--url', url, '--type', 'leave.✓']);
    expect({ code, out, arrived: arrived() }).toEqual({ code: 2, out: '', arrived: 0 });
  });
});

describe('secrets are never echoed on stderr', () => {
  it.each([
    ['sign', ['sign']],
    ['send', ['send', '--url', 'http://127.0.0.1:1/hook', '--type', 'webhook.test']],
  ])(
    '%s: a signing secret typed as an argument, without --secret, is refused unquoted',
    async (_name, argv) => {
      const secret = 'whsec_live_positional_0123456789';
      const { code, out, err } = await cli([...argv, secret]);
      expect(code).toBe(2);
      expect(`${out}${err}`).not.toContain(secret);
      expect(err).toMatch(/Unexpected argument \(a signing secret, not shown\)/);
    },
  );

  it('a secret typed in place of an option value is not echoed either', async () => {
    const secret = 'whsec_live_misplaced_0123456789';
    const { code, err } = await cli(['sign', '--timestamp', secret]);
    expect(code).toBe(2);
    expect(err).not.toContain(secret);
  });

  it.each([
    ['send', ['send', '--type', 'webhook.test', '--url']],
    ['check', ['check', '--url']],
    ['mock', ['mock', '--port', '0', '--deliver-to']],
  ])('%s: a URL with user:password is exit 2 and the password is not printed', async (_name, argv) => {
    const { url, arrived } = await endpoint();
    const { code, out, err } = await cli([...argv, url.replace('http://', 'http://user:s3cret-pw@')]);
    expect({ code, arrived: arrived() }).toEqual({ code: 2, arrived: 0 });
    expect(`${out}${err}`).not.toContain('s3cret-pw');
    expect(err).toMatch(/must not carry a user name or password/);
  });

  it('the test kit refuses to subscribe a URL with user:password, and does not repeat the password', async () => {
    const mock = await createMockService();
    cleanup.push(() => mock.close());
    expect(() => mock.subscribe('http://user:s3cret-pw@127.0.0.1:1/hook')).toThrow(
      /^workforce-webhooks mock: http:\/\/\*\*\*@127\.0\.0\.1:1\/hook carries a user name or password/,
    );
  });

  it('a URL that does not parse is shown without its password', async () => {
    const { code, err } = await cli([
      'send',
      '--type',
      'webhook.test',
      '--url',
      'http://user:s3cret-pw@host:port/',
    ]);
    expect(code).toBe(2);
    expect(err).toMatch(/--url is not a URL: http:\/\/\*\*\*@host:port\//);
  });
});

describe('help of an unknown command', () => {
  it('help nosuch names the unknown command and exits 2, as nosuch does', async () => {
    const { code, out, err } = await cli(['help', 'nosuch']);
    expect({ code, out }).toEqual({ code: 2, out: '' });
    expect(err).toMatch(/unknown command "nosuch"/);
  });
});

describe('mock --deliver-to: how each attempt ended', () => {
  it('shows a 3xx answer as a failed delivery that is retried, not as a success', async () => {
    const { url } = await endpoint((_req, res) => res.writeHead(302, { location: '/elsewhere' }).end());
    const child = start(['mock', '--port', '0', '--deliver-to', url]);
    await expect.poll(child.out, { timeout: 15_000 }).toContain('type one and press Enter');
    child.stdin.write('test\n');
    await expect
      .poll(child.out, { timeout: 15_000 })
      .toMatch(
        /-> webhook\.test \(event [0-9a-f-]{36}\): 302 in \d+ ms: failed \(a redirect counts as a failure; not followed\), retry in 1 min\n/,
      );
  });

  it('prints the outcome of each retry, and when none is left', async () => {
    const answers = [500, 302, 200];
    const { url } = await endpoint((_req, res) => res.writeHead(answers.shift() ?? 200).end());
    const io = capture();
    const mock = await createMockService({ retryScheduleMs: [20, 20], onAttempt: retryPrinter(io) });
    cleanup.push(() => mock.close());
    mock.subscribe(url);
    const { event } = await mock.sendTest();
    await mock.settled();
    expect(io.out).toBe(
      `-> webhook.test (event ${event.id}) attempt 2: 302 in ${mock.deliveries[1]!.durationMs} ms: failed (a redirect counts as a failure; not followed), retry in 20 ms\n` +
        `-> webhook.test (event ${event.id}) attempt 3: 200 in ${mock.deliveries[2]!.durationMs} ms\n`,
    );
    expect(mock.deliveries.map((d) => d.retryInMs)).toEqual([20, 20, undefined]);
  });

  it('says when the last retry failed and none is left', async () => {
    const { url } = await endpoint((_req, res) => res.writeHead(503).end());
    const io = capture();
    const mock = await createMockService({ retryScheduleMs: [20], onAttempt: retryPrinter(io) });
    cleanup.push(() => mock.close());
    mock.subscribe(url);
    await mock.sendTest();
    await mock.settled();
    expect(io.out).toMatch(
      /attempt 2: 503 in \d+ ms: failed \(only a 2xx counts as delivered\), no retries left\n$/,
    );
  });

  it('says why an attempt without an answer failed', async () => {
    const closed = createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const io = capture();
    const mock = await createMockService({ retryScheduleMs: [20], onAttempt: retryPrinter(io) });
    cleanup.push(() => mock.close());
    mock.subscribe(`http://127.0.0.1:${port}/hook`);
    await mock.sendTest();
    await mock.settled();
    expect(io.out).toMatch(/attempt 2: failed \(.*ECONNREFUSED.*\), no retries left\n$/);
  });

  it('Ctrl-C ends it at once while a delivery waits for an endpoint that never answers', async () => {
    const { url, arrived } = await endpoint(() => {});
    const child = start(['mock', '--port', '0', '--deliver-to', url]);
    await expect.poll(child.out, { timeout: 15_000 }).toContain('type one and press Enter');
    child.stdin.write('test\n');
    await expect.poll(arrived, { timeout: 15_000 }).toBe(1);
    const interrupted = Date.now();
    child.kill('SIGINT');
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(0);
    // Wide bound: the delivery's own limit is 10 s; Ctrl-C does not wait for it.
    expect(Date.now() - interrupted).toBeLessThan(5000);
  });
});
