// `send --data-file` with a file as Windows editors and PowerShell write UTF-8 (a byte order mark first): the JSON in
// it is sent, the byte order mark left out.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../cli/run.js';
import { capture } from './capture.js';

const closers: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

describe('send --data-file with a byte order mark', () => {
  it('sends the data in it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wfwh-data-file-'));
    closers.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'data.json');
    writeFileSync(file, '\uFEFF{"employeeId":"emp_1","note":"caf\u00e9"}\r\n', 'utf8');
    const bodies: string[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        bodies.push(Buffer.concat(chunks).toString('utf8'));
        res.writeHead(202).end('{"received":true}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => server.close(resolve)));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/workforce`;
    const io = capture('', { env: { WORKFORCE_WEBHOOK_SECRET: 'whsec_data_file' } });

    const code = await runCli(['send', '--url', url, '--type', 'employee.updated', '--data-file', file], io);

    expect(io.err).toBe('');
    expect(code).toBe(0);
    expect(bodies.map((body) => JSON.parse(body).data)).toEqual([{ employeeId: 'emp_1', note: 'caf\u00e9' }]);
  });
});
