// `workforce-webhooks migrate --postgres`: creates the store's table on a real PostgreSQL, and again changes nothing.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createPostgresStore } from 'workforce-webhooks/postgres';
import { runCli } from '../../cli/run.js';
import { connectPostgres, postgresUrl, uniqueTable } from '../setup/postgres-helpers.js';
import { startPostgresServer } from '../setup/postgres-server.js';
import { capture } from './capture.js';

describe('migrate', () => {
  it('asks for --postgres', async () => {
    const io = capture();
    expect(await runCli(['migrate'], io)).toBe(2);
    expect(io.err).toContain('--postgres');
  });

  it.skipIf(!postgresUrl)('creates the table the store uses, idempotently', async () => {
    const table = uniqueTable('cli');
    for (let run = 0; run < 2; run++) {
      const io = capture();
      expect(await runCli(['migrate', '--postgres', postgresUrl, '--table', table], io)).toBe(0);
      expect(io.out).toBe(`migrated ${table}\n`);
    }
    const store = createPostgresStore({ pool: connectPostgres(), table, cleanupIntervalMs: 0 });
    expect((await store.claim(crypto.randomUUID(), 30_000)).status).toBe('claimed');
  });

  it.skipIf(!postgresUrl)('fails with one line when the database cannot be reached', async () => {
    const io = capture();
    const url = new URL(postgresUrl);
    url.pathname = '/no_such_database';
    expect(await runCli(['migrate', '--postgres', url.href], io)).toBe(1);
    expect(io.err).toMatch(/^workforce-webhooks: error: .*no_such_database.*\n$/);
  });

  it.skipIf(!postgresUrl)('takes a table name of 60 characters (Postgres allows 63)', async () => {
    const table = `t${crypto.randomUUID().replaceAll('-', '')}${'y'.repeat(27)}`;
    expect(table).toHaveLength(60);
    const io = capture();
    expect({
      code: await runCli(['migrate', '--postgres', postgresUrl, '--table', table], io),
      err: io.err,
    }).toEqual({
      code: 0,
      err: '',
    });
    const store = createPostgresStore({ pool: connectPostgres(), table, cleanupIntervalMs: 0 });
    expect((await store.claim(crypto.randomUUID(), 30_000)).status).toBe('claimed');
  });

  it.skipIf(!postgresUrl)(
    'exits with an error, never hangs, when the database stops answering (SIGSTOP)',
    { timeout: 60_000 },
    async () => {
      const postgres = await startPostgresServer();
      try {
        await postgres.pause();
        const io = capture();
        const started = performance.now();
        const code = await Promise.race([
          runCli(['migrate', '--postgres', postgres.url, '--table', uniqueTable('cli')], io),
          sleep(15_000).then(() => 'no answer'),
        ]);
        expect({ code, err: io.err }).toEqual({
          code: 1,
          err: expect.stringMatching(/^workforce-webhooks: error: /),
        });
        expect(performance.now() - started).toBeLessThan(12_000);
      } finally {
        await postgres.dispose();
      }
    },
  );
});
