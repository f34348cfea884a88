// `migrate()` of a `schema.table` whose schema does not exist: a ConfigurationError that names the schema and the fix,
// not only the server's words, with them as its cause.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { ConfigurationError, silentLogger } from 'workforce-webhooks';
import { createPostgresStore } from 'workforce-webhooks/postgres';
import { connectPostgres, postgresUrl, uniqueTable } from '../setup/postgres-helpers.js';

describe.skipIf(!postgresUrl)('migrate() into a schema that does not exist', () => {
  it('rejects with the fix, and migrates once the schema is made', async () => {
    const pool: pg.Pool = connectPostgres();
    const schema = uniqueTable('missing_schema');
    const store = createPostgresStore({
      pool,
      table: `${schema}.events`,
      cleanupIntervalMs: 0,
      logger: silentLogger,
    });
    try {
      const error = await store.migrate().then(
        () => undefined,
        (failure: unknown) => failure,
      );
      expect(error).toBeInstanceOf(ConfigurationError);
      expect((error as Error).message).toBe(
        `workforce-webhooks: the schema of the Postgres store's table does not exist (schema "${schema}" does not exist): create it (CREATE SCHEMA <name>, as its owner) or give \`table\` a schema that exists, then migrate again`,
      );
      expect((error as Error).cause).toBeInstanceOf(pg.DatabaseError);
      await pool.query(`CREATE SCHEMA ${schema}`);
      await store.migrate();
      expect((await store.claim(crypto.randomUUID(), 30_000)).status).toBe('claimed');
    } finally {
      store.close();
      await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await pool.end();
    }
  });
});
