// examples/next built with `next build` against the built package, started with `next start`, sent signed deliveries.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { eventually, expectAnswer, post } from '../contract/adapter-client.js';
import { LEAVE_APPROVED } from '../contract/adapter-dedupe.js';
import { expectValidCopyAndForgery } from '../support/example-process.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));
const app = `${root}examples/next`;
const next = `${root}node_modules/next/dist/bin/next`;
const SECRET = 'whsec_e2e_next_Vb8mT3qZ';
// The route module is evaluated by `next build` too, so the secret must be there at build time as well.
const env = { ...process.env, NEXT_TELEMETRY_DISABLED: '1', WORKFORCE_WEBHOOK_SECRET: SECRET };

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('examples/next on next start', () => {
  let server: ChildProcess | undefined;
  let output = '';
  let base = '';

  beforeAll(async () => {
    // 'workforce-webhooks/next' resolves through the package's exports to dist/, as it does for users.
    await run('npm', ['run', 'build'], { cwd: root, env });
    await run(process.execPath, [next, 'build'], { cwd: app, env });
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    server = spawn(process.execPath, [next, 'start', '-p', String(port), '-H', '127.0.0.1'], {
      cwd: app,
      env,
    });
    const keep = (chunk: string): void => {
      output += chunk;
    };
    server.stdout?.setEncoding('utf8').on('data', keep);
    server.stderr?.setEncoding('utf8').on('data', keep);
    await eventually(() => expect(output).toMatch(/Ready in/), { tries: 600, intervalMs: 50 });
  });

  afterAll(async () => {
    if (server === undefined || server.exitCode !== null) return;
    server.kill('SIGTERM');
    await once(server, 'exit');
  });

  const delivery = () =>
    createSignedDelivery({ secret: SECRET, type: 'leave.approved', data: LEAVE_APPROVED });
  const handled = (id: string): string =>
    `handled leave.approved ${id} for ${LEAVE_APPROVED.employeeId} from 2026-11-02`;

  it('App Router: accepts a signed delivery, runs its handler, dedupes the copy, refuses a forgery', async () => {
    const signed = await expectValidCopyAndForgery(`${base}/api/webhooks/workforce`, SECRET);
    await eventually(() => expect(output).toContain(handled(signed.event.id)));
    // Inside a real Next request, after() took the queued work: the fallback warning never appeared.
    expect(output).not.toContain('after() is unavailable');
  });

  it('answers a trailing-slash POST itself, without a 3xx (skipTrailingSlashRedirect)', async () => {
    const signed = await delivery();
    // `post` fails the test on any 3xx or Location header (spec rule 5).
    expectAnswer(await post(`${base}/api/webhooks/workforce/`, signed), 202, { received: true });
    await eventually(() => expect(output).toContain(handled(signed.event.id)));
  });

  it("keeps the webhook route out of the Proxy's matcher, which redirects everything else", async () => {
    const page = await fetch(`${base}/`, { redirect: 'manual' });
    expect(page.status).toBe(307);
    expect(page.headers.get('location')).toMatch(/\/login$/);
    expectAnswer(await post(`${base}/api/webhooks/workforce`, await delivery()), 202, { received: true });
  });

  it('Pages Router: the API route with bodyParser: false verifies the raw bytes', async () => {
    const url = `${base}/api/webhooks/pages-router`;
    const signed = await delivery();
    expectAnswer(await post(url, signed), 202, { received: true });
    await eventually(() => expect(output).toContain(handled(signed.event.id)));
    const forged = await createSignedDelivery({
      secret: 'whsec_attacker',
      type: 'leave.approved',
      data: LEAVE_APPROVED,
    });
    expectAnswer(await post(url, forged), 400, { error: 'signature_mismatch' });
  });
});
