// The Redis and Postgres examples started on a port another process holds, their store up: one line naming the port
// and how to pick another, exit 1, never Node's "Unhandled 'error' event" and its stack trace.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { connectPostgres, postgresUrl, uniqueTable } from '../setup/postgres-helpers.js';
import { hasRedisServer, startRedisServer } from '../setup/redis-server.js';
import { root } from '../support/packed.js';

const closers: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** Runs `path` on a port another server holds; resolves with that port, the exit code and the output. */
async function runOnTakenPort(
  path: string,
  env: NodeJS.ProcessEnv,
): Promise<{ port: number; code: number | null; output: string }> {
  const other = createServer((_req, res) => res.end('the other app'));
  await new Promise<void>((resolve) => other.listen(0, resolve));
  closers.push(() => new Promise<void>((resolve) => other.close(() => resolve())));
  const { port } = other.address() as AddressInfo;
  const child = spawn(process.execPath, ['--import', 'tsx', path], {
    cwd: root,
    env: { ...process.env, ...env, PORT: String(port), WORKFORCE_WEBHOOK_SECRET: 'whsec_port_taken_store' },
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
  return { port, code, output };
}

const expectPortLine = ({
  port,
  code,
  output,
}: {
  port: number;
  code: number | null;
  output: string;
}): void => {
  expect(output.trim().split('\n')).toEqual([expect.stringContaining(`port ${port}: listen EADDRINUSE`)]);
  expect(output).toContain(`pick another with PORT=${port + 1}`);
  expect(output).not.toMatch(/^\s+at |Unhandled|"listening"/m);
  expect(code).toBe(1);
};

describe('the store examples on a port in use', { timeout: 120_000 }, () => {
  it.skipIf(!hasRedisServer())(
    'examples/scaling says the port and how to pick another, and exits 1',
    async () => {
      const redis = await startRedisServer();
      closers.push(() => redis.dispose());
      expectPortLine(await runOnTakenPort('examples/scaling/server.ts', { REDIS_URL: redis.url }));
    },
  );

  it.skipIf(!postgresUrl)(
    'examples/postgres says the port and how to pick another, and exits 1',
    async () => {
      const database = uniqueTable('port_taken');
      await connectPostgres().query(`CREATE DATABASE ${database}`);
      const databaseUrl = new URL(postgresUrl);
      databaseUrl.pathname = `/${database}`;
      expectPortLine(await runOnTakenPort('examples/postgres/server.ts', { DATABASE_URL: databaseUrl.href }));
    },
  );
});
