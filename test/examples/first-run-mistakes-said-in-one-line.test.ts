// What a newcomer meets running the examples as the README shows them: a port another process holds, no
// WORKFORCE_WEBHOOK_SECRET, no Postgres. Each is one line naming the fix and exit 1, never Node's stack trace.
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

/** Runs an example with tsx until it exits; resolves with its exit code and everything it printed. */
async function run(path: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path], {
    cwd: root,
    env: { ...process.env, ...env },
  });
  closers.push(() => child.exitCode === null && child.signalCode === null && child.kill('SIGKILL'));
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, output };
}

/** The output is a single line, with no trace of a thrown error. */
const expectOneLine = (output: string): void => {
  expect(output.trim().split('\n')).toHaveLength(1);
  expect(output).not.toMatch(/^\s+at |\^|Node\.js v|Error:/m);
};

// The README's quick starts and node:http section, and the full framework examples.
const SERVERS = [
  'examples/express/quickstart.ts',
  'examples/hono/quickstart.ts',
  'examples/fastify/quickstart.ts',
  'examples/node/server.ts',
  'examples/express/server.ts',
  'examples/hono/server.ts',
  'examples/fastify/server.ts',
];

describe('the examples on a first run', { timeout: 120_000 }, () => {
  it.each(SERVERS)('%s on a port in use says the port and how to pick another, and exits 1', async (path) => {
    const other = createServer((_req, res) => res.end('the other app'));
    await new Promise<void>((resolve) => other.listen(0, resolve));
    closers.push(() => new Promise((resolve) => other.close(resolve)));
    const { port } = other.address() as AddressInfo;

    const { code, output } = await run(path, {
      PORT: String(port),
      WORKFORCE_WEBHOOK_SECRET: 'whsec_port_taken',
    });

    expectOneLine(output);
    expect(output).toContain(`port ${port}`);
    expect(output).toContain('EADDRINUSE');
    expect(output).toContain(`PORT=${port + 1}`);
    expect(output).not.toContain('listening on');
    expect(code).toBe(1);
  });

  it.each([
    'examples/express/quickstart.ts',
    'examples/hono/quickstart.ts',
    'examples/fastify/quickstart.ts',
    'examples/node/server.ts',
    'examples/scaling/server.ts',
    'examples/dead-letters/list.ts',
  ])('%s without WORKFORCE_WEBHOOK_SECRET says to set it, and exits 1', async (path) => {
    const { code, output } = await run(path, { PORT: '0', WORKFORCE_WEBHOOK_SECRET: '' });

    expectOneLine(output);
    expect(output).toMatch(/^Set .*WORKFORCE_WEBHOOK_SECRET/);
    expect(code).toBe(1);
  });

  it('the Postgres example with nothing at DATABASE_URL says so with the fix, and exits 1', async () => {
    // A port nothing listens on: refused at once.
    const free = createServer();
    await new Promise<void>((resolve) => free.listen(0, '127.0.0.1', resolve));
    const { port } = free.address() as AddressInfo;
    await new Promise((resolve) => free.close(resolve));

    const { code, output } = await run('examples/postgres/server.ts', {
      PORT: '0',
      DATABASE_URL: `postgres://postgres:s3cret-pw@127.0.0.1:${port}/postgres`,
    });

    expectOneLine(output);
    expect(output).toContain('nothing accepts connections at the Postgres address');
    expect(output).toContain('that Postgres runs there');
    expect(output).not.toContain('s3cret-pw');
    expect(code).toBe(1);
  });
});
