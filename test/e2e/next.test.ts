// examples/next built with `next build` against the built package, started with `next start`, sent signed deliveries.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { eventually, expectAnswer, post } from '../contract/adapter-client.js';
import { LEAVE_APPROVED } from '../contract/adapter-dedupe.js';
import { expectValidCopyAndForgery } from '../support/example-process.js';
import { freePort } from '../support/free-port.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));
const app = `${root}examples/next`;
const next = `${root}node_modules/next/dist/bin/next`;
const SECRET = 'whsec_e2e_next_Vb8mT3qZ';
// `next build` evaluates the route modules; CI and Docker builds have no runtime secrets, so neither has this one.
const buildEnv: NodeJS.ProcessEnv = { ...process.env, NEXT_TELEMETRY_DISABLED: '1' };
delete buildEnv.WORKFORCE_WEBHOOK_SECRET;
const env = { ...buildEnv, WORKFORCE_WEBHOOK_SECRET: SECRET };

/** `next start` on a free port; resolves once Next says it is ready, with its base URL and everything it printed. */
async function start(
  startEnv: NodeJS.ProcessEnv,
): Promise<{ child: ChildProcess; base: string; output: () => string }> {
  const port = await freePort();
  const child = spawn(process.execPath, [next, 'start', '-p', String(port), '-H', '127.0.0.1'], {
    cwd: app,
    env: startEnv,
  });
  let output = '';
  const keep = (chunk: string): void => {
    output += chunk;
  };
  child.stdout?.setEncoding('utf8').on('data', keep);
  child.stderr?.setEncoding('utf8').on('data', keep);
  await eventually(() => expect(output).toMatch(/Ready in/), { tries: 600, intervalMs: 50 });
  return { child, base: `http://127.0.0.1:${port}`, output: () => output };
}

async function stop(child: ChildProcess | undefined): Promise<void> {
  if (child === undefined || child.exitCode !== null) return;
  child.kill('SIGTERM');
  await once(child, 'exit');
}

describe('examples/next on next start', () => {
  let server: ChildProcess | undefined;
  let output = (): string => '';
  let base = '';

  beforeAll(async () => {
    // 'workforce-webhooks/next' resolves through the package's exports to dist/, as it does for users.
    await run('npm', ['run', 'build'], { cwd: root, env: buildEnv });
    // With no secret in the build environment: the receiver is built, its secret read at each delivery.
    await run(process.execPath, [next, 'build'], { cwd: app, env: buildEnv });
    const started = await start(env);
    server = started.child;
    base = started.base;
    output = started.output;
  });

  afterAll(() => stop(server));

  const delivery = () =>
    createSignedDelivery({ secret: SECRET, type: 'leave.approved', data: LEAVE_APPROVED });
  const handled = (id: string): string =>
    `handled leave.approved ${id} for ${LEAVE_APPROVED.employeeId} from 2026-11-02`;

  it('App Router: accepts a signed delivery, runs its handler, dedupes the copy, refuses a forgery', async () => {
    const signed = await expectValidCopyAndForgery(`${base}/api/webhooks/workforce`, SECRET);
    await eventually(() => expect(output()).toContain(handled(signed.event.id)));
    // Inside a real Next request, after() took the queued work: the fallback warning never appeared.
    expect(output()).not.toContain('after() is unavailable');
  });

  it('answers a trailing-slash POST itself, without a 3xx (skipTrailingSlashRedirect)', async () => {
    const signed = await delivery();
    // `post` fails the test on any 3xx or Location header (spec rule 5).
    expectAnswer(await post(`${base}/api/webhooks/workforce/`, signed), 202, { received: true });
    await eventually(() => expect(output()).toContain(handled(signed.event.id)));
  });

  it("keeps the webhook route out of the Proxy's matcher, which redirects everything else", async () => {
    const page = await fetch(`${base}/`, { redirect: 'manual' });
    expect(page.status).toBe(307);
    expect(page.headers.get('location')).toMatch(/\/login$/);
    expectAnswer(await post(`${base}/api/webhooks/workforce`, await delivery()), 202, { received: true });
  });

  it("answers GET, PUT and HEAD with the receiver's 405 and Allow: POST, not Next's own", async () => {
    for (const method of ['GET', 'PUT', 'HEAD']) {
      const response = await fetch(`${base}/api/webhooks/workforce`, { method, redirect: 'manual' });
      expect({ method, status: response.status, allow: response.headers.get('allow') }).toEqual({
        method,
        status: 405,
        allow: 'POST',
      });
      const text = await response.text();
      expect(text).toBe(method === 'HEAD' ? '' : '{"error":"method_not_allowed"}');
    }
  });

  it('Pages Router: the API route with bodyParser: false verifies the raw bytes', async () => {
    const url = `${base}/api/webhooks/pages-router`;
    const signed = await delivery();
    expectAnswer(await post(url, signed), 202, { received: true });
    await eventually(() => expect(output()).toContain(handled(signed.event.id)));
    const forged = await createSignedDelivery({
      secret: 'whsec_attacker',
      type: 'leave.approved',
      data: LEAVE_APPROVED,
    });
    expectAnswer(await post(url, forged), 400, { error: 'signature_mismatch' });
  });

  // Next's edge runtime: a `setImmediate` that throws, no `process.getBuiltinModule`, and webpack's check of the
  // names read from `next/server`. Each route must build, answer 202 and run its handler.
  for (const [router, path] of [
    ['App Router', 'workforce-edge'],
    ['Pages Router', 'pages-router-edge'],
  ] as const)
    it(`${router} on the edge runtime: accepts a signed delivery and runs its handler`, async () => {
      const signed = await delivery();
      expectAnswer(await post(`${base}/api/webhooks/${path}`, signed), 202, { received: true });
      await eventually(() => expect(output()).toContain(handled(signed.event.id)));
      expect(output()).not.toContain('queue_unavailable');
    });

  it('started without the secret: answers 500 not_configured and says which variable to set, once', async () => {
    const unset = await start(buildEnv);
    try {
      for (let i = 0; i < 2; i += 1) {
        expectAnswer(await post(`${unset.base}/api/webhooks/workforce`, await delivery()), 500, {
          error: 'not_configured',
        });
      }
      const said = unset.output().split('no signing secret is configured').length - 1;
      expect(said).toBe(1);
      expect(unset.output()).toContain('Set WORKFORCE_WEBHOOK_SECRET');
    } finally {
      await stop(unset.child);
    }
  });
});

describe('examples/next built with webpack (next build --webpack)', () => {
  let server: ChildProcess | undefined;

  afterAll(() => stop(server));

  it('builds, and its App and Pages Router routes, node and edge, accept a delivery and run its handler', async () => {
    // webpack checks each name read from `next/server` against its exports, and bundles the edge routes its own way.
    await run(process.execPath, [next, 'build', '--webpack'], { cwd: app, env: buildEnv });
    const started = await start(env);
    server = started.child;
    for (const path of ['workforce', 'pages-router', 'workforce-edge', 'pages-router-edge']) {
      const signed = await createSignedDelivery({
        secret: SECRET,
        type: 'leave.approved',
        data: LEAVE_APPROVED,
      });
      expectAnswer(await post(`${started.base}/api/webhooks/${path}`, signed), 202, { received: true });
      await eventually(() => expect(started.output()).toContain(`handled leave.approved ${signed.event.id}`));
    }
    expect(started.output()).not.toContain('after() is unavailable');
  });
});
