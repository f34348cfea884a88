// The service's signature reaching the app under another header name (a proxy rule's `X-Svc-Signature`, a client's
// or gateway's `svc_signature`): every delivery is refused 400 missing_signature, and the warning names the header seen
// and the fix for it, once.
import { createServer, type IncomingHttpHeaders, request } from 'node:http';
import express from 'express';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createReceiver } from 'workforce-webhooks';
import { createExpressMiddleware } from 'workforce-webhooks/express';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { expectAnswer, post } from '../contract/adapter-client.js';
import { listen } from '../contract/adapter-listen.js';
import { type LogLine, recordingLogger } from '../support/logger.js';

const SECRET = 'whsec_first_hour_renamed_Pd8';

const warnings = (lines: LogLine[]): LogLine[] =>
  lines.filter((l) => l.level === 'warn' || l.level === 'error');

/** An Express app on loopback; both closed when the test ends. */
async function mountedApp(): Promise<{ url: string; lines: LogLine[] }> {
  const logger = recordingLogger();
  const receiver = createReceiver({ secret: SECRET, logger });
  onTestFinished(() => receiver.close());
  receiver.on('leave.approved', () => {});
  const app = express();
  app.all('/webhooks/workforce', createExpressMiddleware(receiver));
  const mounted = await listen(createServer(app));
  onTestFinished(() => mounted.close());
  return { url: mounted.url, lines: logger.lines };
}

/** A reverse proxy on loopback that forwards to `target` with each header renamed by `rename`. */
async function renamingProxy(target: string, rename: (name: string) => string): Promise<string> {
  const upstream = new URL(target);
  const server = createServer((req, res) => {
    const headers: IncomingHttpHeaders = {};
    for (const [name, value] of Object.entries(req.headers)) headers[rename(name)] = value;
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

const delivery = () => createSignedDelivery({ secret: SECRET, type: 'leave.approved' });

describe('a signature under another header name', () => {
  it('renamed by a proxy to X-Svc-Signature: named once, with forwarding it under its own name as the fix', async () => {
    const app = await mountedApp();
    const url = await renamingProxy(app.url, (name) => (name === 'svc-signature' ? 'x-svc-signature' : name));
    for (let i = 0; i < 3; i++)
      expectAnswer(await post(url, await delivery()), 400, { error: 'missing_signature' });
    const said = warnings(app.lines);
    expect(said).toHaveLength(1);
    expect(said[0]!.msg).toContain('refused 400 missing_signature');
    expect(said[0]!.msg).toContain('under the header `x-svc-signature`, not `Svc-Signature`');
    expect(said[0]!.msg).toContain('forward it under its own name, `Svc-Signature`');
    expect(JSON.stringify(app.lines)).not.toContain('v1=');
  });

  it('sent as svc_signature: named, with the hyphen and nginx’s underscore default as the fix', async () => {
    const app = await mountedApp();
    const { headers, body } = await delivery();
    const { 'svc-signature': signature, ...rest } = headers;
    expectAnswer(await post(app.url, { body, headers: { ...rest, svc_signature: signature! } }), 400, {
      error: 'missing_signature',
    });
    const said = warnings(app.lines);
    expect(said).toHaveLength(1);
    expect(said[0]!.msg).toContain('under the header `svc_signature`');
    expect(said[0]!.msg).toContain('underscores_in_headers on;');
  });

  it('on a scanner’s bare POST stays quiet, whatever the header is called', async () => {
    const app = await mountedApp();
    const { headers } = await delivery();
    expectAnswer(
      await post(app.url, { body: 'a=1', headers: { 'x-svc-signature': headers['svc-signature']! } }),
      400,
      { error: 'missing_signature' },
    );
    expect(warnings(app.lines)).toEqual([]);
  });
});
