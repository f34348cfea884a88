// A claim sent to a PostgreSQL paused (SIGSTOP) past the store's deadline: the call fails in time, yet the server runs
// the statement once it answers again. That claim's token is nobody's: it is given up, so the sender's retry takes the
// event at once instead of being answered in_progress till the claim's lease lapses.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresStore } from 'workforce-webhooks/postgres';
import { connectPostgres, postgresUrl, uniqueTable } from '../setup/postgres-helpers.js';
import { type PostgresServer, startPostgresServer } from '../setup/postgres-server.js';
import { recordingLogger } from '../support/logger.js';

const TIMEOUT_MS = 300;

describe.skipIf(!postgresUrl)('a claim that lands after its deadline on a paused server', () => {
  // A server of this file's own: pausing the run's would stall every other file.
  let postgres: PostgresServer;
  beforeAll(async () => {
    postgres = await startPostgresServer();
  }, 60_000);
  afterEach(() => postgres.resume());
  afterAll(async () => {
    await postgres?.dispose();
  });

  for (const ordered of [false, true]) {
    it(`gives up the claim it could not answer, so the next claim of the event takes it${ordered ? ' (ordering on)' : ''}`, async () => {
      const pool = connectPostgres(postgres.url, { connectionTimeoutMillis: 1000 });
      const store = createPostgresStore({
        pool,
        table: uniqueTable('stall_late_claim'),
        timeoutMs: TIMEOUT_MS,
        leaseMs: 60_000,
        cleanupIntervalMs: 0,
        logger: recordingLogger(),
      });
      await store.migrate();
      const id = crypto.randomUUID();
      const key = ordered ? 'employee-1' : undefined;

      // The statement reaches the paused backend's socket and waits there.
      await postgres.pause();
      await expect(store.claim(id, 60_000, key)).rejects.toThrow(/no answer within 300 ms/);
      await sleep(2 * TIMEOUT_MS);
      await postgres.resume();

      // The server ran it once it answered again (the row is there, with a token nobody holds), and the store gave
      // it up: the next delivery's claim takes the event, well before the 60 s lease would lapse.
      await expect
        .poll(async () => (await store.claim(id, 60_000, key)).status, { timeout: 10_000, interval: 100 })
        .toBe('claimed');
      store.close();
    });
  }
});
