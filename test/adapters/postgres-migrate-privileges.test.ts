// migrate() run by an app role that may read and write the store's tables but create nothing (least privilege).
import { describe, expect, it } from 'vitest';
import { createPostgresStore } from 'workforce-webhooks/postgres';
import { connectPostgres, postgresUrl, uniqueTable } from '../setup/postgres-helpers.js';

describe.skipIf(!postgresUrl)('migrate() by a role without CREATE on the schema', () => {
  it('resolves on tables an admin made, and the store claims and commits there; a missing table still fails', async () => {
    const admin = connectPostgres();
    const role = uniqueTable('app_role');
    const schema = uniqueTable('app_schema');
    const table = `${schema}.events`;
    await admin.query(`CREATE ROLE ${role} LOGIN`);
    try {
      // The admin (or `npx workforce-webhooks migrate`) made the tables; the app's role only reads and writes them.
      await admin.query(`CREATE SCHEMA ${schema}`);
      await createPostgresStore({ pool: admin, table, cleanupIntervalMs: 0 }).migrate();
      await admin.query(`GRANT USAGE ON SCHEMA ${schema} TO ${role}`);
      await admin.query(
        `GRANT SELECT, INSERT, UPDATE, DELETE ON ${schema}.events, ${schema}.events_ordering TO ${role}`,
      );
      const url = new URL(postgresUrl);
      url.username = role;
      const pool = connectPostgres(url.toString(), { max: 2 });
      // Every instance runs migrate() on start, as the README's example does.
      const store = createPostgresStore({ pool, table, cleanupIntervalMs: 0 });
      const migrated = await store.migrate().then(
        () => 'ok',
        (error: Error) => error.message,
      );
      expect(migrated).toBe('ok');
      const id = crypto.randomUUID();
      expect((await store.claim(id, 30_000)).status).toBe('claimed');
      const tx = await store.begin(id);
      if (tx === 'committed') throw new Error('a fresh event was found committed');
      expect(await tx.commit()).toBe(true);
      // A table nobody made is still the role's to create: the permission error says so.
      const missing = createPostgresStore({ pool, table: `${schema}.other`, cleanupIntervalMs: 0 });
      await expect(missing.migrate()).rejects.toThrow(/permission denied for schema/);
      await pool.end();
    } finally {
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.query(`DROP OWNED BY ${role}`);
      await admin.query(`DROP ROLE ${role}`);
    }
  });
});
