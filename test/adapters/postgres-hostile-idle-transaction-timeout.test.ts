// A server whose idle_in_transaction_session_timeout is shorter than a handler's pause inside ctx.transaction(): the
// server ends the event's transaction under every attempt. Said once, with the fix, not only pg's "not queryable".
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createReceiver } from 'workforce-webhooks';
import { createPostgresStore } from 'workforce-webhooks/postgres';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { connectPostgres, postgresUrl, uniqueTable } from '../setup/postgres-helpers.js';
import { recordingLogger } from '../support/logger.js';

const secret = 'whsec_postgres_hostile_idle_transaction_timeout_test';
const FIX =
  /Postgres ended an event's transaction while its handlers ran \(idle_in_transaction_session_timeout\b.*\).*ALTER ROLE <user> SET idle_in_transaction_session_timeout/;

// A receiver on a store whose server ends a transaction idle for 100 ms, its handlers pausing 400 ms in theirs.
async function setup() {
  const pool = connectPostgres(postgresUrl, { options: '-c idle_in_transaction_session_timeout=100' });
  const logger = recordingLogger();
  const store = createPostgresStore({
    pool,
    table: uniqueTable('hostile_idle'),
    cleanupIntervalMs: 0,
    logger,
  });
  await store.migrate();
  const app = uniqueTable('hostile_idle_app');
  await pool.query(`CREATE TABLE ${app} (event_id text NOT NULL)`);
  const receiver = createReceiver({ secret, store, logger: recordingLogger(), mode: 'inline' });
  // Writes, then waits past the server's timeout (a slow API call): the commit meets the closed connection.
  receiver.on('leave.approved', async (event, ctx) => {
    const db = await ctx.transaction();
    await db.query(`INSERT INTO ${app} (event_id) VALUES ($1)`, [event.id]);
    await sleep(400);
  });
  // Waits past it, then writes: the handler's own query meets the closed connection.
  receiver.on('leave.rejected', async (event, ctx) => {
    const db = await ctx.transaction();
    await db.query('SELECT 1');
    await sleep(400);
    await db.query(`INSERT INTO ${app} (event_id) VALUES ($1)`, [event.id]);
  });
  const post = async (type: string): Promise<number> => {
    const delivery = await createSignedDelivery({ secret, type });
    const answer = await receiver.handle({
      method: 'POST',
      headers: delivery.headers,
      body: new TextEncoder().encode(delivery.body),
    });
    return answer.status;
  };
  const committed = async (): Promise<number> =>
    (await pool.query(`SELECT count(*)::int AS n FROM ${app}`)).rows[0].n;
  const said = () => logger.lines.filter((line) => FIX.test(line.msg ?? ''));
  const close = async () => {
    await receiver.close();
    store.close();
  };
  return { post, committed, said, close };
}

describe.skipIf(!postgresUrl)(
  'the Postgres store on a server with a short idle_in_transaction_session_timeout',
  () => {
    for (const [type, who] of [
      ['leave.approved', 'the commit'],
      ['leave.rejected', "the handler's own query"],
    ] as const) {
      it(`says once, with the fix, that the server ended the transaction, when ${who} meets it`, async () => {
        const { post, committed, said, close } = await setup();
        for (let i = 0; i < 2; i++) expect(await post(type)).toBeGreaterThanOrEqual(500);
        expect(await committed()).toBe(0);
        expect(said()).toHaveLength(1);
        expect(said()[0]!.level).toBe('warn');
        await close();
      });
    }
  },
);
