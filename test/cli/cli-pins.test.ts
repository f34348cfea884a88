// The real CLI as a user's shell runs it: usage mistakes as one line, sign's exact bytes, send's delivery format and
// its failures, mock's lifetime; and the test kit's retry schedule and sample ids.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { verifySignature, type WorkforceEvent } from 'workforce-webhooks';
import {
  createMockService,
  DEFAULT_RETRY_SCHEDULE_MS,
  SAMPLE_IDS,
  sampleEventData,
} from 'workforce-webhooks/testing';
import { type CliProcess, runCliProcess, startCli } from './cli-process.js';

const SECRET = 'whsec_cli_pins_secret_value';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const SIGNATURE = /^t=(\d+),v1=([0-9a-f]{64})$/;

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

/** The environment of a user's shell: no secret unless given. */
function env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const out = { ...process.env, ...extra };
  if (!('WORKFORCE_WEBHOOK_SECRET' in extra)) delete out.WORKFORCE_WEBHOOK_SECRET;
  return out;
}

/** Runs the CLI to its end, standard input closed. */
const run = (args: readonly string[], extra: Record<string, string> = {}) => runCliProcess(args, env(extra));

/** The CLI left running; killed after the test when still alive. */
function start(args: readonly string[], extra: Record<string, string> = {}): CliProcess {
  const child = startCli(args, env(extra));
  cleanup.push(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return child;
}

/** A loopback server handed each request with its whole body; closed, connections dropped, after the test. */
async function serve(
  handler: (req: IncomingMessage, res: ServerResponse, body: string) => void,
): Promise<{ url: string; port: number }> {
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
    });
    req.on('end', () => handler(req, res, body));
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
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, port };
}

describe('usage mistakes: exit 2, one line on stderr, nothing on stdout, no secret', () => {
  it.each([
    [['sign', '--secret'], /argument missing/],
    [['send', '--url', 'http://127.0.0.1:1', '--type', 'x', '--', 'extra'], /Unexpected argument 'extra'/],
    [['mock', '--secret', 'x'], /give --deliver-to too/],
  ])('%j', async (args, message) => {
    const { code, out, err } = await run(args, { WORKFORCE_WEBHOOK_SECRET: SECRET });
    expect({ code, out }).toEqual({ code: 2, out: '' });
    expect(err).toMatch(message);
    expect(err.trim().split('\n')).toHaveLength(1);
    expect(err).not.toContain(SECRET);
  });

  it('mock --port of a port in use', async () => {
    const { port } = await serve(() => {});
    const { code, err } = await run(['mock', '--port', String(port)]);
    expect(code).toBe(2);
    expect(err).toContain(`port ${port} is in use`);
  });
});

describe('sign', () => {
  it('signs the exact bytes on stdin, unicode and a trailing newline included, and prints only the header', async () => {
    const body = '{"name":"Chiọma ✓ 😀"}\n';
    const child = start(['sign', '--timestamp', '1700000000'], { WORKFORCE_WEBHOOK_SECRET: SECRET });
    child.stdin.end(body);
    const [code] = (await once(child, 'close')) as [number];
    expect({ code, err: child.err() }).toEqual({ code: 0, err: '' });
    const header = child.out().replace(/\n$/, '');
    expect(header).toMatch(/^t=1700000000,v1=[0-9a-f]{64}$/);
    await expect(
      verifySignature({ payload: body, header, secret: SECRET, now: () => 1_700_000_000_000 }),
    ).resolves.toBeDefined();
  });

  it('signs an empty body when stdin is closed', async () => {
    const { code, out } = await run(['sign', '--timestamp', '1700000000'], {
      WORKFORCE_WEBHOOK_SECRET: SECRET,
    });
    expect(code).toBe(0);
    await expect(
      verifySignature({ payload: '', header: out.trim(), secret: SECRET, now: () => 1_700_000_000_000 }),
    ).resolves.toBeDefined();
  });
});

describe('send', () => {
  it('sends the headers of the spec\'s "Delivery format", signed over the exact body', async () => {
    let seen: IncomingMessage['headers'] = {};
    let raw = '';
    const { url } = await serve((req, res, body) => {
      seen = req.headers;
      raw = body;
      res.writeHead(204).end();
    });
    const { code } = await run(['send', '--url', url, '--type', 'payroll.paid'], {
      WORKFORCE_WEBHOOK_SECRET: SECRET,
    });
    expect(code).toBe(0);
    const event = JSON.parse(raw) as WorkforceEvent;
    expect(seen['content-type']).toBe('application/json; charset=utf-8');
    expect(seen['user-agent']).toMatch(/^Svc-Webhooks\/\S+$/);
    expect(seen['svc-event-id']).toBe(event.id);
    expect(seen['svc-event-type']).toBe('payroll.paid');
    expect(seen['svc-delivery-id']).toMatch(UUID);
    expect(String(seen['svc-signature'])).toMatch(SIGNATURE);
    await expect(
      verifySignature({ payload: raw, header: String(seen['svc-signature']), secret: SECRET }),
    ).resolves.toBeDefined();
  });

  it('does not follow a 302 and exits 1 (spec rule 5)', async () => {
    let followed = 0;
    const { url } = await serve((req, res) => {
      if (req.url === '/target') {
        followed++;
        res.writeHead(200).end('ok');
        return;
      }
      res.writeHead(302, { location: '/target' }).end('moved');
    });
    const { code, out } = await run(['send', '--url', `${url}/hook`, '--type', 'webhook.test'], {
      WORKFORCE_WEBHOOK_SECRET: SECRET,
    });
    expect({ code, followed }).toEqual({ code: 1, followed: 0 });
    expect(out).toMatch(/^HTTP 302 /);
  });

  it('ends with "no answer within" for an endpoint that hangs, "could not reach" for one that resets; exit 1', async () => {
    const { url } = await serve((req) => {
      if (req.url === '/reset') req.socket.destroy();
    });
    const hang = await run(
      ['send', '--url', `${url}/hang`, '--type', 'webhook.test', '--timeout-ms', '300'],
      {
        WORKFORCE_WEBHOOK_SECRET: SECRET,
      },
    );
    expect(hang.code).toBe(1);
    expect(hang.err).toContain('no answer within 300 ms');
    const reset = await run(['send', '--url', `${url}/reset`, '--type', 'webhook.test'], {
      WORKFORCE_WEBHOOK_SECRET: SECRET,
    });
    expect(reset.code).toBe(1);
    expect(reset.err).toContain('could not reach');
  });
});

describe('mock', () => {
  it('SIGINT ends it with exit 0 and frees its port', async () => {
    const child = start(['mock', '--port', '0']);
    await expect.poll(child.out, { timeout: 15_000 }).toMatch(/base URL\s+http:\/\/127\.0\.0\.1:\d+/);
    const port = Number(/base URL\s+http:\/\/127\.0\.0\.1:(\d+)/.exec(child.out())![1]);
    child.kill('SIGINT');
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(0);
    const again = createServer();
    again.listen(port, '127.0.0.1');
    await once(again, 'listening');
    await new Promise((resolve) => again.close(resolve));
  });
});

describe('test kit', () => {
  it('the default retry schedule stays within two days', () => {
    const total = DEFAULT_RETRY_SCHEDULE_MS.reduce((a, b) => a + b, 0);
    expect(total).toBeLessThanOrEqual(2 * 24 * 3600_000);
  });

  it("sample ids never name a record of the mock's data", async () => {
    const mock = await createMockService();
    cleanup.push(() => mock.close());
    const state = JSON.stringify(mock.state);
    for (const id of Object.values(SAMPLE_IDS)) expect(state).not.toContain(id);
    expect(sampleEventData('attendance.absence_report.completed').reportId).toBe(SAMPLE_IDS.reportId);
  });
});
