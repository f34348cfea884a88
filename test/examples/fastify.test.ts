// Smoke test of examples/fastify: the quick start, listening on loopback and sent signed deliveries.
import { afterEach, describe, expect, it } from 'vitest';
import { createExampleApp, DEMO_SECRET } from '../../examples/fastify/server.js';
import { LEAVE_APPROVED } from '../contract/adapter-dedupe.js';
import type { MountedApp } from '../contract/adapter-suite.js';
import { expectValidCopyAndForgery, itRunsDirectly } from '../support/example-process.js';

const SECRET = 'whsec_example_test_fastify_3Qz9';

describe('examples/fastify', () => {
  let mounted: MountedApp | undefined;
  afterEach(async () => {
    await mounted?.close();
    mounted = undefined;
  });

  it('accepts a signed delivery, dedupes its copy, refuses a forgery, and leaves JSON routes alone', async () => {
    const lines: string[] = [];
    const { app, receiver } = createExampleApp({ secret: SECRET, log: (line) => lines.push(line) });
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    mounted = { url: `${address}/webhooks/workforce`, close: () => app.close() };
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

  itRunsDirectly('examples/fastify/server.ts', DEMO_SECRET);
});
