// The Postgres store on a database where migrate() never ran: every failure names the missing table and the fix.
import { describe, expect, it } from 'vitest';
import { ConfigurationError, createReceiver } from 'workforce-webhooks';
import { createPostgresStore } from 'workforce-webhooks/postgres';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { connectPostgres, postgresUrl, uniqueTable } from '../setup/postgres-helpers.js';
import { recordingLogger } from '../support/logger.js';

const secret = 'whsec_postgres_missing_table_test';
const FIX =
  /table is missing \(relation "wfwh_test_unmade_\w+" does not exist\): run `await store\.migrate\(\)` on start, or `npx workforce-webhooks migrate --postgres \$DATABASE_URL` once/;

describe.skipIf(!postgresUrl)('a Postgres store whose table migrate() never made', () => {
  it('answers deliveries 503 and logs the fix, not only an unreachable store', async () => {
    const store = createPostgresStore({
      pool: connectPostgres(),
      table: uniqueTable('unmade'),
      cleanupIntervalMs: 0,
    });
    const logger = recordingLogger();
    const receiver = createReceiver({ secret, store, logger, mode: 'inline' });
    receiver.on('leave.approved', () => {});
    const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
    const answer = await receiver.handle({
      method: 'POST',
      headers: delivery.headers,
      body: new TextEncoder().encode(delivery.body),
    });
    expect(answer.status).toBe(503);
    const errors = logger.lines.filter((line) => line.level === 'error');
    expect(errors).toHaveLength(1);
    const err = errors[0]!.obj.err as Error;
    expect(err).toBeInstanceOf(ConfigurationError);
    expect(err.message).toMatch(FIX);
    expect(errors[0]!.msg).toMatch(/^workforce-webhooks: the dedupe store is not set up: /);
    expect(errors[0]!.msg).toMatch(FIX);
    await receiver.close();
  });

  it('rejects begin() and cleanup() with the same fix', async () => {
    const store = createPostgresStore({
      pool: connectPostgres(),
      table: uniqueTable('unmade'),
      cleanupIntervalMs: 0,
    });
    await expect(store.begin(crypto.randomUUID())).rejects.toThrow(FIX);
    await expect(store.cleanup()).rejects.toThrow(FIX);
    await expect(store.renew(crypto.randomUUID(), 'token', 1000)).rejects.toThrow(FIX);
  });
});
