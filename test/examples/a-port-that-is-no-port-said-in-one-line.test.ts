// `PORT=abc npx tsx server.ts` (or a port past 65535): the examples name the value and what to give, in one line, and
// exit 1, rather than Node's RangeError and its stack trace.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
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

// Every example that listens on $PORT. The Redis and Postgres ones are refused before they connect to anything, so
// none runs here: the port is the first thing wrong.
const SERVERS = [
  'examples/express/quickstart.ts',
  'examples/hono/quickstart.ts',
  'examples/fastify/quickstart.ts',
  'examples/node/server.ts',
  'examples/express/server.ts',
  'examples/hono/server.ts',
  'examples/fastify/server.ts',
  'examples/scaling/server.ts',
  'examples/postgres/server.ts',
];

describe('the examples given a PORT that is no port', { timeout: 120_000 }, () => {
  it.each(
    SERVERS.flatMap((path) => [
      [path, 'abc'],
      [path, '70000'],
    ]),
  )('%s with PORT=%s names the value and the range, and exits 1', async (path, port) => {
    const { code, output } = await run(path, {
      PORT: port,
      WORKFORCE_WEBHOOK_SECRET: 'whsec_port_not_a_port',
      // Nothing listens here: were the example to connect before it reads PORT, this would be its first line.
      REDIS_URL: 'redis://127.0.0.1:1',
      DATABASE_URL: 'postgres://postgres@127.0.0.1:1/postgres',
    });

    expect(output.trim().split('\n')).toEqual([expect.stringContaining(`PORT=${port} is not a port`)]);
    expect(output).toContain('give 0 to 65535, e.g. PORT=3000');
    expect(output).not.toMatch(/^\s+at |RangeError|ERR_SOCKET_BAD_PORT|Node\.js v|listening/m);
    expect(code).toBe(1);
  });
});
