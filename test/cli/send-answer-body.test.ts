// `send` prints the endpoint's answer: the bytes a terminal would obey are shown as escapes, and an answer that
// never ends is read only up to a limit, so the command ends with what it read.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../cli/run.js';
import { capture } from './capture.js';
import { endless } from './endless-answer.js';
import { serveEndpoint } from './endpoint.js';

const SECRET = 'whsec_send_answer_body';
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

const serve = (handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> =>
  serveEndpoint(handler, '/hooks', closers);

async function send(url: string) {
  const io = capture();
  const args = ['send', '--url', url, '--secret', SECRET, '--type', 'webhook.test', '--timeout-ms', '5000'];
  const code = await runCli(args, io);
  return { code, out: io.out, err: io.err };
}

describe('send prints the answer safely', () => {
  it('shows escape sequences and other control characters as \\u escapes, keeping lines and tabs', async () => {
    const url = await serve((_req, res) =>
      res.writeHead(400).end('\u001b]0;owned\u0007\u001b[2Jline one\r\n\tline two\rover\u202ehidden'),
    );
    const { code, out } = await send(url);
    expect(code).toBe(1);
    expect(out).toMatch(/^HTTP 400 in \d+ ms/);
    expect(out).toContain('\\u001b]0;owned\\u0007\\u001b[2Jline one\r\n\tline two\\u000dover\\u202ehidden\n');
    for (const raw of ['\u001b', '\u0007', '\u202e']) expect(out).not.toContain(raw);
    expect(out.replaceAll('\r\n', '')).not.toContain('\r');
  });

  it('ends with the start of an answer that never ends, saying the rest was not read', async () => {
    const url = await serve(endless(500));
    const { code, out, err } = await send(url);
    expect(err).not.toContain('no answer');
    expect(code).toBe(1);
    expect(out).toMatch(/^HTTP 500 in \d+ ms/);
    expect(out).toContain('(the answer goes on past 65536 bytes; the rest was not read)');
    expect(out.length).toBeLessThan(70_000);
  });

  it('prints a plain answer as it came', async () => {
    const url = await serve((_req, res) => res.writeHead(200).end('{"received":true}'));
    const { code, out } = await send(url);
    expect(code).toBe(0);
    expect(out).toMatch(/^HTTP 200 in \d+ ms \(event [0-9a-f-]{36}\)\n\{"received":true\}\n$/);
  });
});
