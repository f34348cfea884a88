// `check` end to end: it passes real receivers and fails deliberately broken ones for the right reasons.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { createReceiver, verifySignature } from 'workforce-webhooks';
import { createExpressMiddleware } from 'workforce-webhooks/express';
import { createNodeHandler } from 'workforce-webhooks/node';
import { runCli } from '../../cli/run.js';
import { createExampleApp } from '../../examples/express/server.js';
import { capture } from './capture.js';

const SECRET = 'whsec_check';
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
async function serve(handler: Handler): Promise<string> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/workforce`;
}

/** Runs `check` and reads its table back: check name to pass/fail and reason. */
async function check(url: string, timeoutMs = 5000) {
  const io = capture();
  const code = await runCli(
    ['check', '--url', url, '--secret', SECRET, '--timeout-ms', String(timeoutMs)],
    io,
  );
  const rows = io.out
    .split('\n')
    .filter((line) => /^(PASS|FAIL) /.test(line))
    .map((line) => {
      const [result, name, answer, reason] = line.split(/ {2,}/);
      return { ok: result === 'PASS', name: name!, answer, reason };
    });
  const failed = Object.fromEntries(
    rows.filter((r) => !r.ok).map((r) => [r.name.split(' ').slice(0, 2).join(' '), r.reason]),
  );
  return { code, rows, failed, out: io.out, err: io.err };
}

/** A correct receiver on node:http, with `before` able to break it. */
function receiverHandler(before?: (req: IncomingMessage, res: ServerResponse) => boolean): Handler {
  const receiver = createReceiver({ secret: SECRET }).onAny(() => {});
  cleanup.push(() => receiver.close());
  const handle = createNodeHandler(receiver);
  return (req, res) => {
    if (before?.(req, res)) return;
    void handle(req, res);
  };
}

/** Reads and verifies a delivery by hand, for receivers that misbehave after the signature check. */
async function verified(req: IncomingMessage): Promise<{ ok: boolean; id?: string }> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  try {
    await verifySignature({ payload: body, header: req.headers['svc-signature'] as string, secret: SECRET });
    return { ok: true, id: JSON.parse(body.toString()).id };
  } catch {
    return { ok: false };
  }
}

describe('check passes correct receivers', () => {
  it('passes an Express 5 app with createExpressMiddleware, shows progress, exits 0', async () => {
    const receiver = createReceiver({ secret: SECRET }).on('webhook.test', () => {});
    cleanup.push(() => receiver.close());
    const app = express().post('/webhooks/workforce', createExpressMiddleware(receiver));
    const url = await serve(app);
    const result = await check(url);
    expect(result.rows).toHaveLength(7);
    expect(result.failed).toEqual({});
    expect(result.code).toBe(0);
    expect(result.out).toContain('All 7 checks passed.');
    expect(result.err).toMatch(/\[3\/7\] forged signature is refused with 400 \.\.\. 400 in \d+ ms/);
    expect(result.err).toMatch(/\[2\/7\] same event again .* \.\.\. 200 in \d+ ms/);
  });

  it('passes examples/express', async () => {
    const { app, receiver } = createExampleApp({ secret: SECRET, log: () => {} });
    cleanup.push(() => receiver.close());
    const result = await check(await serve(app));
    expect(result.failed).toEqual({});
    expect(result.code).toBe(0);
  });
});

describe('check fails broken receivers with the right reasons', () => {
  it('a receiver that redirects everything', async () => {
    const url = await serve((_req, res) => res.writeHead(308, { location: '/elsewhere' }).end());
    const { code, failed, rows, out } = await check(url);
    expect(code).toBe(1);
    expect(rows.every((r) => !r.ok)).toBe(true);
    // One cause for every delivery: told once, below the table.
    expect(failed['forged signature']).toBe('expected 400 (spec rule 1): see the cause below');
    expect(out).toMatch(/\(6 checks, one cause\):\n {2}answer: 308 to \/elsewhere/);
    expect(failed['no 3xx']).toMatch(/every delivery: 308 to \/elsewhere: .*a 3xx is a failed delivery/);
  });

  it('a receiver that redirects only the trailing slash', async () => {
    const handler = receiverHandler((req, res) => {
      if (!req.url?.endsWith('/')) return false;
      res.writeHead(301, { location: req.url.slice(0, -1) }).end();
      return true;
    });
    const { code, failed } = await check(await serve(handler));
    expect(code).toBe(1);
    expect(Object.keys(failed)).toEqual(['no redirect', 'no 3xx']);
    expect(failed['no 3xx']).toMatch(/trailing slash: 301 to \/webhooks\/workforce/);
  });

  it('a receiver that answers 200 to forged signatures', async () => {
    const url = await serve((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200).end('{}'));
    });
    const { code, failed } = await check(url);
    expect(code).toBe(1);
    expect(Object.keys(failed)).toEqual(['forged signature', 'stale signature']);
    expect(failed['forged signature']).toMatch(/accepted a forged signature.*spec rule 1/);
  });

  it('sends the same event again as the service redelivers it: the same body, a new delivery id', async () => {
    const bodies = new Map<string, { body: string; deliveryId: string }[]>();
    const url = await serve(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks).toString();
      const id = String(req.headers['svc-event-id']);
      bodies.set(id, [
        ...(bodies.get(id) ?? []),
        { body, deliveryId: String(req.headers['svc-delivery-id']) },
      ]);
      res.writeHead(200).end();
    });
    await check(url);
    const [twice] = [...bodies.values()].filter((copies) => copies.length === 2);
    expect(twice![0]!.body).toBe(twice![1]!.body);
    expect(twice![0]!.deliveryId).not.toBe(twice![1]!.deliveryId);
  });

  it('a receiver that refuses duplicates', async () => {
    const seen = new Set<string>();
    const url = await serve(async (req, res) => {
      const { ok, id } = await verified(req);
      if (!ok) return void res.writeHead(400).end();
      if (seen.has(id!)) return void res.writeHead(409).end('{"error":"duplicate"}');
      seen.add(id!);
      res.writeHead(200).end();
    });
    const { code, failed } = await check(url);
    expect(code).toBe(1);
    expect(Object.keys(failed)).toEqual(['same event']);
    expect(failed['same event']).toMatch(/answered 409 .*retried for two days.*spec rule 3/);
  });

  it('a receiver that answers too slowly', async () => {
    // Refusals come at once; valid deliveries never get an answer, so only the time limit can end them.
    const url = await serve(async (req, res) => {
      const { ok } = await verified(req);
      if (!ok) res.writeHead(400).end();
    });
    const { code, failed, out } = await check(url, 600);
    expect(code).toBe(1);
    expect(Object.keys(failed)).toEqual(['valid delivery', 'same event', 'unknown event', 'no redirect']);
    expect(failed['valid delivery']).toBe('expected 2xx (spec rule 2): see the cause below');
    expect(out).toMatch(
      /\(4 checks, one cause\):\n {2}no answer within 600 ms: a slower answer is a failed delivery.*spec rule 2/,
    );
  });
});
