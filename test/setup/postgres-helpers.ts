// Test-side Postgres helpers: the run's server URL (or a loud skip), isolated table names, pools closed after each file.
import pg from 'pg';
import { afterAll, inject } from 'vitest';

/** The run's PostgreSQL (`test/setup/postgres.ts`); empty when there is none, and Postgres suites skip. */
export const postgresUrl: string = inject('postgresUrl');

/**
 * A table name no other test uses (tests share one server): letters, digits and underscores only.
 * @example
 * createPostgresStore({ pool, table: uniqueTable('store') });
 */
export function uniqueTable(label: string): string {
  return `wfwh_test_${label}_${crypto.randomUUID().slice(0, 8)}`;
}

const pools = new Set<pg.Pool>();
afterAll(async () => {
  await Promise.all([...pools].map((pool) => pool.end().catch(() => {})));
  pools.clear();
});

/**
 * A `pg` pool on the run's server (or `url`), closed after the file's tests.
 * @example
 * const pool = connectPostgres();
 */
export function connectPostgres(url: string = postgresUrl, options: pg.PoolConfig = {}): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: 10, ...options });
  // An idle client's connection error (the server stopped by a test) is emitted on the pool; queries carry it too.
  pool.on('error', () => {});
  pools.add(pool);
  return pool;
}
