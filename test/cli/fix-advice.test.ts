// The fixes the package prints for a body parsed first are the README's: no express.raw() in front (Express would
// answer oversized and slow bodies itself), and the Hono route mounted with app.all (405 but for POST).
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import express from 'express';
import { Hono } from 'hono';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createReceiver } from 'workforce-webhooks';
import { createExpressMiddleware } from 'workforce-webhooks/express';
import { createHonoHandler } from 'workforce-webhooks/hono';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { runChecks } from '../../cli/checks.js';

const SECRET = 'whsec_fix_advice_test';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('README: the fixes the package gives for a body parsed first', () => {
  it('check does not advise express.raw() in front of the route, which the README forbids', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    vi.spyOn(console, 'warn').mockImplementation(() => {});
    const receiver = createReceiver({ secret: SECRET });
    receiver.onAny(() => {});
    const app = express();
    app.use(express.json()); // the first-hour mistake
    app.all('/webhooks/workforce', createExpressMiddleware(receiver));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as AddressInfo;
    const results = await runChecks({ url: `http://127.0.0.1:${port}/webhooks/workforce`, secret: SECRET });
    await receiver.close();
    server.close();
    const valid = results.find((r) => r.name.startsWith('valid delivery'));
    expect(valid?.body).toBe('{"error":"raw_body_unavailable"}');
    expect(valid?.hint).toContain('before app.use(express.json())');
    expect(valid?.hint).not.toContain('express.raw');
  });

  it("Hono: the logged fix mounts the route with app.all, as the README's quick start does", async () => {
    const error = vi.spyOn(console, 'error').mockImplementation(() => {});
    const receiver = createReceiver({ secret: SECRET });
    receiver.onAny(() => {});
    const app = new Hono();
    // A body-reading middleware before the handler: the Hono first-hour mistake the README names.
    app.use('/webhooks/*', async (c, next) => {
      await c.req.json();
      await next();
    });
    app.all('/webhooks/workforce', createHonoHandler(receiver));
    const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as AddressInfo;
    const signed = await createSignedDelivery({ secret: SECRET, type: 'leave.approved' });
    const response = await fetch(`http://127.0.0.1:${port}/webhooks/workforce`, {
      method: 'POST',
      headers: signed.headers,
      body: signed.body,
    });
    expect([response.status, await response.text()]).toEqual([500, '{"error":"raw_body_unavailable"}']);
    await receiver.close();
    server.close();
    const lines = error.mock.calls.map((call) => String(call[0]));
    expect(lines).toHaveLength(1);
    // app.post would leave GET to Hono's 404, where the README promises the receiver's 405.
    expect(lines[0]).not.toContain("app.post('/webhooks/workforce'");
  });
});
