// The Express examples started on a port another process holds (port 3000 often is): they fail with EADDRINUSE and a
// non-zero exit, never print "listening on" for a port whose deliveries go to the other process.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { root } from '../support/packed.js';

const closers: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

describe('the Express examples on a port in use', { timeout: 60_000 }, () => {
  it.each(['examples/express/quickstart.ts', 'examples/express/server.ts'])(
    '%s exits non-zero with EADDRINUSE and does not claim to listen',
    async (path) => {
      const other = createServer((_req, res) => res.end('the other app'));
      await new Promise<void>((resolve) => other.listen(0, resolve));
      closers.push(() => new Promise((resolve) => other.close(resolve)));
      const { port } = other.address() as AddressInfo;

      const child = spawn(process.execPath, ['--import', 'tsx', path], {
        cwd: root,
        env: { ...process.env, PORT: String(port), WORKFORCE_WEBHOOK_SECRET: 'whsec_port_in_use' },
      });
      closers.push(() => child.exitCode === null && child.signalCode === null && child.kill('SIGKILL'));
      let output = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        output += chunk;
      });
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        output += chunk;
      });
      const [code] = await once(child, 'close');

      expect(output).toContain('EADDRINUSE');
      expect(output).not.toContain('listening on');
      expect(code).not.toBe(0);
    },
  );
});
