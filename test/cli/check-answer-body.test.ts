// `check` on an endpoint whose failures answer with arbitrary bodies: the status and the receiver's own error code
// are shown, never bytes the endpoint reflects (the request's signature, a secret, terminal control sequences).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../cli/run.js';
import { capture } from './capture.js';
import { endless } from './endless-answer.js';
import { serveEndpoint } from './endpoint.js';

const SECRET = 'whsec_check_answer_body';
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

const serve = (handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> =>
  serveEndpoint(handler, '/webhooks/workforce', closers);

async function check(url: string) {
  const io = capture();
  const code = await runCli(['check', '--url', url, '--secret', SECRET, '--timeout-ms', '5000'], io);
  return { code, out: io.out, err: io.err };
}

describe('check prints what a failed answer says, not what it reflects', () => {
  it("shows a debug error page's status and size, without the signature, secret or control bytes it echoes", async () => {
    const signatures: string[] = [];
    const url = await serve((req, res) => {
      const signature = String(req.headers['svc-signature']);
      signatures.push(signature);
      // A development error page: the request's headers, the process's environment, a coloured stack trace.
      const page = `<pre>\u001b[31mError: boom\u001b[0m\nsvc-signature: ${signature}\nWEBHOOK_SECRET=${SECRET}\n\u001b]0;pwned\u0007</pre>`;
      res.writeHead(500, { 'content-type': 'text/html' }).end(page);
    });
    const { code, out, err } = await check(url);
    expect(code).toBe(1);
    expect(out).toMatch(
      /answer: 500 \(\d+ bytes, not shown: not one of the receiver's \{"error": code\} answers\)/,
    );
    const printed = out + err;
    expect(printed).not.toContain(SECRET);
    expect(printed).not.toContain('WEBHOOK_SECRET');
    expect(printed).not.toContain('\u001b');
    expect(printed).not.toContain('\u0007');
    expect(signatures.length).toBeGreaterThan(0);
    for (const signature of signatures) {
      expect(printed).not.toContain(signature);
      expect(printed).not.toContain(signature.split('v1=')[1]!);
    }
  });

  it("does not take a reflected secret dressed as an error code for the receiver's answer", async () => {
    const url = await serve((_req, res) => {
      res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: SECRET }));
    });
    const { code, out } = await check(url);
    expect(code).toBe(1);
    expect(out).not.toContain(SECRET);
    expect(out).toMatch(/answer: 400 \(\d+ bytes, not shown/);
  });

  it("shows the receiver's own answer, also when a framework pretty-prints it", async () => {
    const url = await serve((_req, res) => {
      res
        .writeHead(500, { 'content-type': 'application/json' })
        .end('{\n  "error": "raw_body_unavailable"\n}\n');
    });
    const { out } = await check(url);
    expect(out).toContain('answer: 500 {"error":"raw_body_unavailable"}');
    expect(out).toContain('Register the webhook route before any body parser');
  });

  it('ends with an answer whose body never ends, reading only its start', async () => {
    const url = await serve(endless(500));
    const { code, out } = await check(url);
    expect(code).toBe(1);
    expect(out).not.toContain('no answer');
    expect(out).toMatch(/answer: 500 \(over 65536 bytes, not shown/);
  });

  it('says when the answer had no body', async () => {
    const url = await serve((_req, res) => res.writeHead(503).end());
    const { out } = await check(url);
    expect(out).toContain('answer: 503 (empty body)');
  });
});
