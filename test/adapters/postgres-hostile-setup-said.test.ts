// The Postgres store given a server or a session that cannot work (a read-only replica, a search_path with no schema):
// each delivery still 503, and what is logged names the setup mistake and its fix, not an unreachable store.
import { describe, expect, it } from 'vitest';
import { ConfigurationError, createReceiver } from 'workforce-webhooks';
import { createPostgresStore, type PostgresStore } from 'workforce-webhooks/postgres';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { connectPostgres, postgresUrl, uniqueTable } from '../setup/postgres-helpers.js';
import { recordingLogger } from '../support/logger.js';

const secret = 'whsec_postgres_hostile_setup_said_test';

// One delivery to a receiver on `store`: its status and the error lines logged.
async function deliver(store: PostgresStore) {
  const logger = recordingLogger();
  const receiver = createReceiver({ secret, store, logger, mode: 'inline' });
  let runs = 0;
  receiver.on('leave.approved', () => {
    runs += 1;
  });
  const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
  const answer = await receiver.handle({
    method: 'POST',
    headers: delivery.headers,
    body: new TextEncoder().encode(delivery.body),
  });
  await receiver.close();
  return { status: answer.status, runs, errors: logger.lines.filter((line) => line.level === 'error') };
}

describe.skipIf(!postgresUrl)('the Postgres store on a read-only server', () => {
  const READ_ONLY =
    /Postgres refuses writes here, a read-only server \(.*read.only.*\): point the pool at the primary/;

  it('answers 503 and logs the fix, not an unreachable store, when the pool reaches a replica', async () => {
    const table = uniqueTable('hostile_ro');
    const writable = createPostgresStore({ pool: connectPostgres(), table, cleanupIntervalMs: 0 });
    await writable.migrate();
    writable.close();
    const pool = connectPostgres(postgresUrl, { options: '-c default_transaction_read_only=on' });
    const store = createPostgresStore({ pool, table, cleanupIntervalMs: 0 });

    const { status, runs, errors } = await deliver(store);
    expect(status).toBe(503);
    expect(runs).toBe(0);
    expect(errors).toHaveLength(1);
    expect(errors[0]!.obj.err).toBeInstanceOf(ConfigurationError);
    expect(errors[0]!.msg).toMatch(/^workforce-webhooks: the dedupe store is not set up: /);
    expect(errors[0]!.msg).toMatch(READ_ONLY);
    // migrate() and cleanup() say the same.
    await expect(store.migrate()).rejects.toThrow(READ_ONLY);
    await expect(store.cleanup()).rejects.toThrow(READ_ONLY);
    store.close();
  });
});

describe.skipIf(!postgresUrl)(
  'the Postgres store on a session whose search_path names no schema that exists',
  () => {
    const SEARCH_PATH =
      /search_path names no schema that exists .*: set it to the table's schema \(ALTER ROLE .* SET search_path = public\), or name the schema in `table`/;

    it('says the search_path and its fix at migrate(), not a missing schema to create', async () => {
      const table = uniqueTable('hostile_path');
      const pool = connectPostgres(postgresUrl, { options: '-c search_path=nowhere' });
      const store = createPostgresStore({ pool, table, cleanupIntervalMs: 0 });
      const error = await store.migrate().then(
        () => undefined,
        (failure: unknown) => failure,
      );
      expect(error).toBeInstanceOf(ConfigurationError);
      expect((error as Error).message).toMatch(SEARCH_PATH);
      store.close();
    });

    it('says, with a missing table, that a schema named in `table` finds one search_path hides', async () => {
      const table = uniqueTable('hostile_hidden');
      const made = createPostgresStore({ pool: connectPostgres(), table, cleanupIntervalMs: 0 });
      await made.migrate();
      made.close();
      const store = createPostgresStore({
        pool: connectPostgres(postgresUrl, { options: '-c search_path=nowhere' }),
        table,
        cleanupIntervalMs: 0,
      });
      const { status, errors } = await deliver(store);
      expect(status).toBe(503);
      expect(errors).toHaveLength(1);
      expect(errors[0]!.msg).toMatch(
        /table is missing .*: run `await store\.migrate\(\)` on start, .*; made already in a schema the connection's search_path does not list\? name it in `table` \(`public\.workforce_webhook_events`\)/,
      );
      store.close();
    });
  },
);
