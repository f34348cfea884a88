// An ordering entry sent to a PostgreSQL paused (SIGSTOP) past the store's deadline: the call fails in time, yet the
// server runs the statement once it answers again. The key leased to that run (which never runs: its attempt failed)
// is left, so the record's other events enter at once instead of after the lease.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresStore } from 'workforce-webhooks/postgres';
import { connectPostgres, postgresUrl, uniqueTable } from '../setup/postgres-helpers.js';
import { type PostgresServer, startPostgresServer } from '../setup/postgres-server.js';
import { recordingLogger } from '../support/logger.js';

const TIMEOUT_MS = 300;

describe.skipIf(!postgresUrl)('an ordering entry that lands after its deadline on a paused server', () => {
  // A server of this file's own: pausing the run's would stall every other file.
  let postgres: PostgresServer;
  beforeAll(async () => {
    postgres = await startPostgresServer();
  }, 60_000);
  afterEach(() => postgres.resume());
  afterAll(async () => {
    await postgres?.dispose();
  });

  it("leaves the key the failed run's entry took, so another event of the record enters", async () => {
    const pool = connectPostgres(postgres.url, { connectionTimeoutMillis: 1000 });
    const table = uniqueTable('stall_late_entry');
    const store = createPostgresStore({
      pool,
      table,
      timeoutMs: TIMEOUT_MS,
      cleanupIntervalMs: 0,
      logger: recordingLogger(),
    });
    await store.migrate();
    const ordering = store.ordering!;
    const first = crypto.randomUUID();

    // The statement reaches the paused backend's socket and waits there.
    await postgres.pause();
    await expect(ordering.enter('employee-1', first, 60_000, 'run-1')).rejects.toThrow(
      /no answer within 300 ms/,
    );
    await sleep(2 * TIMEOUT_MS);
    await postgres.resume();

    // The server ran it once it answered again (the key was leased to run-1 for 60 s), and the store left it.
    await expect
      .poll(async () => (await ordering.enter('employee-1', crypto.randomUUID(), 60_000, 'run-2')).status, {
        timeout: 10_000,
        interval: 100,
      })
      .toBe('entered');
    store.close();
  });
});
