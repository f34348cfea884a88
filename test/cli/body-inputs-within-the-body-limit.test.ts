// `sign`'s standard input and `--data-file` are read up to a receiver's default body limit (1 MiB), never without
// end: a larger body is one line saying so and exit 2, and a writer that never stops is not read into memory.
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startCli } from './cli-process.js';

const MiB = 1024 * 1024;
const SECRET = 'whsec_body_limit_K2';
const scratch = mkdtempSync(join(tmpdir(), 'wfwh-body-limit-'));
const closers: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const close of closers) await close();
  rmSync(scratch, { recursive: true, force: true });
});

/** Runs `sign` with `body` on standard input; resolves with its exit code and output. */
async function sign(body: Buffer): Promise<{ code: number; out: string; err: string }> {
  const child = startCli(['sign', '--secret', SECRET]);
  // The CLI may stop reading (and close its end) before the whole body is written.
  child.stdin.on('error', () => {});
  child.stdin.end(body);
  const [code] = (await once(child, 'close')) as [number];
  return { code, out: child.out(), err: child.err() };
}

/** A JSON object of about `bytes` bytes. */
const jsonOf = (bytes: number): string => JSON.stringify({ employeeId: 'E1', note: 'x'.repeat(bytes) });

describe('bodies over a receiver limit', { timeout: 120_000 }, () => {
  it('sign prints the header of a body of 1 MiB', async () => {
    const { code, out } = await sign(Buffer.alloc(MiB, 'a'));
    expect(out).toMatch(/^t=\d+,v1=[0-9a-f]{64}\n$/);
    expect(code).toBe(0);
  });

  it('sign refuses a body over 1 MiB in one line, exit 2', async () => {
    const { code, out, err } = await sign(Buffer.alloc(MiB + 1, 'a'));
    expect(out).toBe('');
    expect(err.trim().split('\n')).toHaveLength(1);
    expect(err).toContain('standard input is over 1 MiB');
    expect(err).toContain('maxBodyBytes');
    expect(code).toBe(2);
  });

  it('sign stops reading a standard input that never ends', async () => {
    const child = startCli(['sign', '--secret', SECRET]);
    child.stdin.on('error', () => {});
    const chunk = Buffer.alloc(64 * 1024, 'a');
    let exited = false;
    child.once('exit', () => {
      exited = true;
    });
    // Written as fast as the CLI reads, until it exits.
    const write = (): void => {
      while (!exited && !child.stdin.destroyed && child.stdin.write(chunk));
    };
    child.stdin.on('drain', write);
    write();
    const [code] = (await once(child, 'close')) as [number];
    expect(child.err()).toContain('standard input is over 1 MiB');
    expect(code).toBe(2);
  });

  it.each(['send', 'check'])(
    '%s refuses a --data-file over 1 MiB before sending, exit 2',
    async (command) => {
      const file = join(scratch, `${command}-large.json`);
      writeFileSync(file, jsonOf(2 * MiB));
      const child = startCli([
        command,
        ...(command === 'send' ? ['--type', 'leave.approved'] : []),
        '--url',
        // Never reached: the file is refused first.
        'http://127.0.0.1:59/webhooks/workforce',
        '--secret',
        SECRET,
        '--data-file',
        file,
      ]);
      child.stdin.end();
      const [code] = (await once(child, 'close')) as [number];

      expect(child.err()).toContain(`--data-file ${file} is over 1 MiB`);
      expect(child.err()).not.toMatch(/\n\s+at /);
      expect(child.err()).not.toContain('Checking');
      expect(code).toBe(2);
    },
  );

  it('send reads a --data-file under the limit and sends it', async () => {
    const file = join(scratch, 'small.json');
    writeFileSync(file, '{"employeeId":"E1"}');
    let received = '';
    const server = createServer((req, res) => {
      req.setEncoding('utf8').on('data', (chunk: string) => {
        received += chunk;
      });
      req.on('end', () => res.writeHead(202).end());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/workforce`;
    const child = startCli([
      'send',
      '--type',
      'leave.approved',
      '--url',
      url,
      '--secret',
      SECRET,
      '--data-file',
      file,
    ]);
    child.stdin.end();
    const [code] = (await once(child, 'close')) as [number];

    expect(JSON.parse(received).data).toEqual({ employeeId: 'E1' });
    expect(code).toBe(0);
  });
});
