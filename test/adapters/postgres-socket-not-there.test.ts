// A Postgres store whose pool points at a Unix socket directory where no Postgres (or proxy) listens: every call fails
// with a ConfigurationError saying so with the fix, not a bare `connect ENOENT`.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigurationError, silentLogger } from 'workforce-webhooks';
import { createPostgresStore } from 'workforce-webhooks/postgres';

const closers: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

describe('the Postgres store on a socket directory where nothing listens', () => {
  it.each([
    ['the pool host', (dir: string) => ({ host: dir, database: 'app' })],
    ['a socket: connection string', (dir: string) => ({ connectionString: `socket:${dir}?db=app` })],
  ])('fails its calls with the fix, given as %s', async (_, config) => {
    const dir = await mkdtemp(join(tmpdir(), 'pg-socket-'));
    closers.push(() => rm(dir, { recursive: true, force: true }));
    const pool = new pg.Pool({ ...config(dir), connectionTimeoutMillis: 5000 });
    closers.push(() => pool.end());
    const store = createPostgresStore({ pool, cleanupIntervalMs: 0, logger: silentLogger });
    closers.push(() => store.close());
    for (const call of [() => store.migrate(), () => store.claim(crypto.randomUUID(), 30_000)]) {
      const error = await call().then(
        () => undefined,
        (failure: unknown) => failure,
      );
      expect(error).toBeInstanceOf(ConfigurationError);
      expect((error as Error).message).toMatch(
        /^workforce-webhooks: no Postgres socket is at that path \(connect ENOENT .*\.s\.PGSQL\.5432\): check the connection string's socket directory \(its host\) and port, and that Postgres \(or its proxy\) runs there$/,
      );
    }
  });
});
