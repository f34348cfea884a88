// A proxy in front of the app that drops the `Svc-Signature` header (or every custom header) gets every real delivery
// refused 400: said once, with the fix, when the request is the service's own; a scanner's bare POST stays quiet.
// A server clock off by minutes is said once with its offset and the fix.
import { createServer, type IncomingHttpHeaders, request } from 'node:http';
import express from 'express';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { createReceiver } from 'workforce-webhooks';
import { createExpressMiddleware } from 'workforce-webhooks/express';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { expectAnswer, post, send } from '../contract/adapter-client.js';
import { listen } from '../contract/adapter-listen.js';
import { type LogLine, recordingLogger } from '../support/logger.js';

const SECRET = 'whsec_first_hour_stripped_Qv4';
const MINUTE = 60_000;

const warnings = (lines: LogLine[]): LogLine[] =>
  lines.filter((l) => l.level === 'warn' || l.level === 'error');

/** An Express app on loopback with a receiver on the clock `now`; closed when the test ends. */
async function mountedApp(now: () => number = Date.now): Promise<{ url: string; lines: LogLine[] }> {
  const logger = recordingLogger();
  const receiver = createReceiver({ secret: SECRET, logger, now });
  onTestFinished(() => receiver.close());
  receiver.on('leave.approved', () => {});
  const app = express();
  app.all('/webhooks/workforce', createExpressMiddleware(receiver));
  const mounted = await listen(createServer(app));
  onTestFinished(() => mounted.close());
  return { url: mounted.url, lines: logger.lines };
}

/** A reverse proxy on loopback that forwards to `target` the headers `keep` lets through, as a misset one does. */
async function strippingProxy(target: string, keep: (name: string) => boolean): Promise<string> {
  const upstream = new URL(target);
  const server = createServer((req, res) => {
    const headers: IncomingHttpHeaders = {};
    for (const [name, value] of Object.entries(req.headers)) if (keep(name)) headers[name] = value;
    const out = request(
      { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on('error', () => res.writeHead(502).end());
    req.pipe(out);
  });
  const mounted = await listen(server);
  onTestFinished(() => mounted.close());
  return mounted.url;
}

const deliver = async (url: string, timestampMs = Date.now()) =>
  post(
    url,
    await createSignedDelivery({
      secret: SECRET,
      type: 'leave.approved',
      timestamp: Math.floor(timestampMs / 1000),
    }),
  );

describe('a proxy that drops Svc-Signature', () => {
  it('is said once, naming the header and the fix, while every delivery is refused 400 missing_signature', async () => {
    const app = await mountedApp();
    const url = await strippingProxy(app.url, (name) => name !== 'svc-signature');
    for (let i = 0; i < 3; i++) {
      expectAnswer(await deliver(url), 400, { error: 'missing_signature' });
    }
    const said = warnings(app.lines);
    expect(said).toHaveLength(1);
    expect(said[0]!.level).toBe('warn');
    expect(said[0]!.msg).toContain('refused 400 missing_signature');
    expect(said[0]!.msg).toContain('forward the `Svc-Signature` header');
    expect(said[0]!.obj).toEqual({ code: 'missing_signature', count: 1 });
    expect(JSON.stringify(app.lines)).not.toContain('first_hour_stripped');
    expect(JSON.stringify(app.lines)).not.toContain('leaveRequestId');
  });

  it('is said too when every custom header and the User-Agent are dropped: the body is the service envelope', async () => {
    const app = await mountedApp();
    const url = await strippingProxy(app.url, (name) => !name.startsWith('svc-') && name !== 'user-agent');
    expectAnswer(await deliver(url), 400, { error: 'missing_signature' });
    const said = warnings(app.lines);
    expect(said).toHaveLength(1);
    expect(said[0]!.msg).toContain('forward the `Svc-Signature` header');
  });

  it('says a header rewritten out of shape on the service’s delivery, with the same fix', async () => {
    const app = await mountedApp();
    const delivery = await createSignedDelivery({ secret: SECRET, type: 'leave.approved' });
    // A proxy that re-encodes the header value (`t%3D...`) leaves no `t=` item.
    const mangled = encodeURIComponent(delivery.headers['svc-signature']!);
    expectAnswer(
      await post(app.url, { ...delivery, headers: { ...delivery.headers, 'svc-signature': mangled } }),
      400,
      {
        error: 'malformed_signature',
      },
    );
    const said = warnings(app.lines);
    expect(said).toHaveLength(1);
    expect(said[0]!.msg).toContain('refused 400 malformed_signature');
    expect(said[0]!.msg).toContain('forward the `Svc-Signature` header unchanged');
  });
});

describe('with no logger option', () => {
  it('prints the dropped header once on stderr, for deliveries that keep coming', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const error = vi.spyOn(console, 'error').mockImplementation(() => {});
    onTestFinished(() => {
      vi.restoreAllMocks();
    });
    const receiver = createReceiver({ secret: SECRET });
    onTestFinished(() => receiver.close());
    receiver.on('leave.approved', () => {});
    const app = express();
    app.all('/webhooks/workforce', createExpressMiddleware(receiver));
    const mounted = await listen(createServer(app));
    onTestFinished(() => mounted.close());
    const url = await strippingProxy(mounted.url, (name) => name !== 'svc-signature');
    for (let i = 0; i < 3; i++) expectAnswer(await deliver(url), 400, { error: 'missing_signature' });
    const printed = [...warn.mock.calls, ...error.mock.calls].map((call) => String(call[0]));
    expect(printed).toEqual([expect.stringContaining('forward the `Svc-Signature` header unchanged')]);
  });
});

describe('a proxy route that drops Svc-Signature on some deliveries only', () => {
  it('is said once it comes back a third time among verified deliveries, naming one route or instance', async () => {
    const app = await mountedApp();
    const stripping = await strippingProxy(app.url, (name) => name !== 'svc-signature');
    for (let i = 0; i < 3; i++) {
      expectAnswer(await deliver(app.url), 202, { received: true });
      expect(warnings(app.lines)).toEqual([]);
      expectAnswer(await deliver(stripping), 400, { error: 'missing_signature' });
    }
    const said = warnings(app.lines);
    expect(said).toHaveLength(1);
    expect(said[0]!.msg).toContain('3 deliveries were refused 400 missing_signature');
    expect(said[0]!.msg).toContain('one route, instance or rule');
  });
});

describe('a scanner without the service headers', () => {
  it('is refused 400 and nothing is said, whatever its body or header', async () => {
    const app = await mountedApp();
    const bodies = ['', '{}', '{"id":"x","type":"leave.approved"}', 'a=1&b=2', '<?xml version="1.0"?><a/>'];
    for (const body of bodies) {
      expectAnswer(
        await send(app.url, { method: 'POST', body, headers: { 'content-type': 'application/json' } }),
        400,
        { error: 'missing_signature' },
      );
      expectAnswer(
        await send(app.url, { method: 'POST', body, headers: { 'svc-signature': 't=abc,v1=00' } }),
        400,
        { error: 'malformed_signature' },
      );
    }
    expect(warnings(app.lines)).toEqual([]);
  });
});

describe('a server clock off by minutes', () => {
  it('is said once, with the offset and the fix (sync the clock with NTP)', async () => {
    const skew = 7 * MINUTE;
    const app = await mountedApp(() => Date.now() + skew);
    for (let i = 0; i < 3; i++) {
      expectAnswer(await deliver(app.url), 400, { error: 'timestamp_out_of_tolerance' });
    }
    const said = warnings(app.lines);
    expect(said).toHaveLength(1);
    expect(said[0]!.msg).toContain("Is this server's clock right?");
    expect(said[0]!.msg).toMatch(/signed 4[12]\d s before this server's time/);
    expect(said[0]!.msg).toContain('NTP');
    expect(said[0]!.obj).toMatchObject({ code: 'timestamp_out_of_tolerance', count: 1 });
    expect(said[0]!.obj.ageSeconds).toBeGreaterThanOrEqual(420);
  });

  it('names the `now` option when it is years off: a clock in seconds, not milliseconds', async () => {
    const app = await mountedApp(() => Math.floor(Date.now() / 1000));
    expectAnswer(await deliver(app.url), 400, { error: 'timestamp_out_of_tolerance' });
    const said = warnings(app.lines);
    expect(said).toHaveLength(1);
    expect(said[0]!.msg).toContain('does the `now` option return milliseconds, like `Date.now`?');
    expect(said[0]!.msg).not.toContain('NTP');
  });
});
