// A database made with a one-byte encoding (LATIN1) refuses every character it lacks: migrate() says so once, with the
// fix, while a UTF8 database migrates quietly.
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresStore } from 'workforce-webhooks/postgres';
import { connectPostgres, postgresUrl, uniqueTable } from '../setup/postgres-helpers.js';
import { recordingLogger } from '../support/logger.js';

describe.skipIf(!postgresUrl)('the Postgres store on a database that is not UTF8', () => {
  const database = uniqueTable('latin1');
  const made: string[] = [];
  afterAll(async () => {
    const admin = connectPostgres();
    for (const name of made) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  });

  it('warns once from migrate() with the fix, and a UTF8 database is not warned of', {
    timeout: 60_000,
  }, async () => {
    const admin = connectPostgres();
    await admin.query(
      `CREATE DATABASE ${database} ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0`,
    );
    made.push(database);
    const url = new URL(postgresUrl);
    url.pathname = `/${database}`;
    const pool = connectPostgres(url.toString());
    const logger = recordingLogger();
    const store = createPostgresStore({ pool, table: uniqueTable('store'), logger, cleanupIntervalMs: 0 });
    await store.migrate();
    await store.migrate();
    const warned = logger.lines.filter((line) => line.level === 'warn');
    expect(warned).toHaveLength(1);
    expect(warned[0]!.msg).toMatch(/encoding is LATIN1, not UTF8.*ENCODING 'UTF8' TEMPLATE template0/);
    // What it warns of: an ordering key LATIN1 has no character for fails every delivery of its event.
    await expect(store.claim(crypto.randomUUID(), 30_000, 'employee:李')).rejects.toMatchObject({
      code: '22P05',
    });
    store.close();

    const quiet = recordingLogger();
    const utf8 = createPostgresStore({
      pool: connectPostgres(),
      table: uniqueTable('store'),
      logger: quiet,
      cleanupIntervalMs: 0,
    });
    await utf8.migrate();
    utf8.close();
    expect(quiet.lines.filter((line) => line.level === 'warn')).toEqual([]);
  });
});
