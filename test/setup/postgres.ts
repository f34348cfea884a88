// Vitest global setup: one real PostgreSQL for the whole run, its URL provided to tests as `postgresUrl`.
import type { TestProject } from 'vitest/node';
import { hasPostgres, type PostgresServer, startPostgresServer } from './postgres-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** `postgres://postgres@127.0.0.1:<port>/postgres` of the run's server; empty when there is none (tests skip). */
    postgresUrl: string;
  }
}

let server: PostgresServer | undefined;

/**
 * Starts PostgreSQL, or says loudly why the Postgres tests will skip (and fails under `WFWH_REQUIRE_POSTGRES=1`).
 * @example
 * // vitest.config.ts: test: { globalSetup: ['test/setup/postgres.ts'] }
 */
export async function setup(project: TestProject): Promise<void> {
  if (!hasPostgres()) {
    const message =
      'PostgreSQL not found under /usr/lib/postgresql/<version>/bin: the Postgres store, queue and transaction tests cannot run';
    if (process.env.WFWH_REQUIRE_POSTGRES === '1') throw new Error(`${message} (WFWH_REQUIRE_POSTGRES=1)`);
    console.warn(
      `\n${'!'.repeat(100)}\n!!! ${message}; they are SKIPPED.\n!!! Install it (apt-get install postgresql) or set POSTGRES_BIN.\n${'!'.repeat(100)}\n`,
    );
    project.provide('postgresUrl', '');
    return;
  }
  server = await startPostgresServer();
  project.provide('postgresUrl', server.url);
}

/**
 * Stops the run's PostgreSQL and removes its directory.
 * @example
 * await teardown();
 */
export async function teardown(): Promise<void> {
  await server?.dispose();
  server = undefined;
}
