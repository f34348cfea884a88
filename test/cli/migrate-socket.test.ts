// `migrate --postgres` on a Unix socket, in pg's `socket:/directory?db=name` form or as a directory: taken, and a
// directory where nothing listens said with the fix.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../cli/run.js';
import { capture } from './capture.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe('migrate --postgres on a Unix socket', () => {
  it.each([
    ['socket: URL', (dir: string) => `socket:${dir}?db=app`],
    ['directory', (dir: string) => `${dir} app`],
  ])(
    'takes the %s form, and says a directory with no Postgres with the fix',
    { timeout: 30_000 },
    async (_, url) => {
      const dir = await mkdtemp(join(tmpdir(), 'migrate-socket-'));
      dirs.push(dir);
      const io = capture();
      expect(await runCli(['migrate', '--postgres', url(dir)], io)).toBe(1);
      expect(io.err).toMatch(
        /^workforce-webhooks: error: no Postgres socket is at that path \(connect ENOENT .*\): check the connection string's socket directory \(its host\) and port, and that Postgres \(or its proxy\) runs there\n$/,
      );
      expect(io.out).toBe('');
    },
  );
});
