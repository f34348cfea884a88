// Smoke test of examples/hono: the quick start, served on loopback and sent signed deliveries.
import type { Server } from 'node:http';
import { createAdaptorServer } from '@hono/node-server';
import { afterEach, describe, expect, it } from 'vitest';
import { createExampleApp, DEMO_SECRET } from '../../examples/hono/server.js';
import { LEAVE_APPROVED } from '../contract/adapter-dedupe.js';
import { listen } from '../contract/adapter-listen.js';
import type { MountedApp } from '../contract/adapter-suite.js';
import { expectValidCopyAndForgery, itRunsDirectly } from '../support/example-process.js';

const SECRET = 'whsec_example_test_hono_7Kp2';

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
    const delivery = await expectValidCopyAndForgery(mounted.url, SECRET);
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

  itRunsDirectly('examples/hono/server.ts', DEMO_SECRET);
});
