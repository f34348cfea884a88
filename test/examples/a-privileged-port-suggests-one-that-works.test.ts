// `PORT=80 npx tsx server.ts` without root: the listen fails with EACCES, and the port the example suggests must be
// one a user can take (3000), not 81, which fails the same way.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { root } from '../support/packed.js';

const closers: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

// The user `nobody` is run as: only root can start a process as another user.
const NOBODY = 65534;
const privilegedStart = (): number => {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_unprivileged_port_start', 'utf8'));
  } catch {
    return 1024;
  }
};
const canRunUnprivileged = process.getuid?.() === 0 && privilegedStart() > 80;

/** Runs an example as `nobody` until it exits; resolves with its exit code and everything it printed. */
async function runUnprivileged(path: string): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path], {
    cwd: root,
    uid: NOBODY,
    gid: NOBODY,
    env: { ...process.env, HOME: '/tmp', PORT: '80', WORKFORCE_WEBHOOK_SECRET: 'whsec_privileged_port' },
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

describe.skipIf(!canRunUnprivileged)(
  'the examples on a port below 1024, without root',
  { timeout: 120_000 },
  () => {
    it.each([
      ['examples/express/quickstart.ts', 'pick another: PORT=3000 npx tsx server.ts'],
      ['examples/hono/quickstart.ts', 'pick another: PORT=3000 npx tsx server.ts'],
      ['examples/fastify/quickstart.ts', 'pick another: PORT=3000 npx tsx server.ts'],
      ['examples/node/server.ts', 'pick another: PORT=3000 npx tsx server.ts'],
      ['examples/express/server.ts', 'pick another with PORT=3000'],
      ['examples/hono/server.ts', 'pick another with PORT=3000'],
      ['examples/fastify/server.ts', 'pick another with PORT=3000'],
    ])('%s says EACCES and suggests a port that needs no root', async (path, suggestion) => {
      const { code, output } = await runUnprivileged(path);

      expect(output.trim().split('\n')).toEqual([expect.stringContaining('port 80: listen EACCES')]);
      expect(output).toContain(suggestion);
      expect(output).not.toContain('PORT=81');
      expect(code).toBe(1);
    });
  },
);
