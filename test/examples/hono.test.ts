// Smoke test of examples/hono: the quick start, served on loopback and sent signed deliveries.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import type { Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import { createAdaptorServer } from '@hono/node-server';
import { afterEach, describe, expect, it } from 'vitest';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { createExampleApp, DEMO_SECRET } from '../../examples/hono/server.js';
import { eventually, expectAnswer, post } from '../contract/adapter-client.js';
import { LEAVE_APPROVED } from '../contract/adapter-dedupe.js';
import { listen } from '../contract/adapter-listen.js';
import type { MountedApp } from '../contract/adapter-suite.js';

const SECRET = 'whsec_example_test_hono_7Kp2';
const root = fileURLToPath(new URL('../../', import.meta.url));

describe('examples/hono', () => {
  let mounted: MountedApp | undefined;
  afterEach(async () => {
    await mounted?.close();
    mounted = undefined;
  });

  it('accepts a signed delivery, dedupes its copy, refuses a forgery, and leaves JSON routes alone', async () => {
    const lines: string[] = [];
    const { app, receiver } = createExampleApp({ secret: SECRET, log: (line) => lines.push(line) });
    mounted = await listen(createAdaptorServer({ fetch: app.fetch }) as Server);
    const delivery = await createSignedDelivery({
      secret: SECRET,
      type: 'leave.approved',
      data: LEAVE_APPROVED,
    });
    expectAnswer(await post(mounted.url, delivery), 202, { received: true });
    expectAnswer(await post(mounted.url, delivery), 200, { received: true, duplicate: true });
    const forged = await createSignedDelivery({
      secret: 'whsec_attacker',
      type: 'leave.approved',
      data: LEAVE_APPROVED,
    });
    expectAnswer(await post(mounted.url, forged), 400, { error: 'signature_mismatch' });
    const echo = await fetch(mounted.url.replace('/webhooks/workforce', '/api/echo'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"ok":true}',
    });
    expect(await echo.json()).toEqual({ ok: true });
    await receiver.close();
    expect(lines.sort()).toEqual(
      [
        `calendar: block ${LEAVE_APPROVED.employeeId} 2026-11-02..2026-11-06`,
        `audit: leave.approved ${delivery.event.id}`,
      ].sort(),
    );
  });

  it('listens on PORT when run directly and shuts down cleanly on SIGTERM', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0' };
    delete env.WORKFORCE_WEBHOOK_SECRET;
    const child = spawn(process.execPath, ['--import', 'tsx', 'examples/hono/server.ts'], { cwd: root, env });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
    });
    try {
      await eventually(() => expect(output).toMatch(/listening on http:\/\/localhost:\d+\//), {
        tries: 300,
        intervalMs: 50,
      });
      const port = /localhost:(\d+)\//.exec(output)![1];
      const delivery = await createSignedDelivery({
        secret: DEMO_SECRET,
        type: 'leave.approved',
        data: LEAVE_APPROVED,
      });
      expectAnswer(await post(`http://127.0.0.1:${port}/webhooks/workforce`, delivery), 202, {
        received: true,
      });
      await eventually(() => expect(output).toContain(`audit: leave.approved ${delivery.event.id}`));
    } finally {
      child.kill('SIGTERM');
    }
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
  });
});
