// A handler that ends the event transaction itself (COMMIT or ROLLBACK on ctx.transaction()): said once, with the fix.
import { describe, expect, it } from 'vitest';
import { createReceiver, type Receiver } from 'workforce-webhooks';
import { createPostgresStore } from 'workforce-webhooks/postgres';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { connectPostgres, postgresUrl, uniqueTable } from '../setup/postgres-helpers.js';
import { recordingLogger } from '../support/logger.js';

const secret = 'whsec_postgres_handler_commit_test';

async function post(receiver: Receiver) {
  const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
  const answer = await receiver.handle({
    method: 'POST',
    headers: delivery.headers,
    body: new TextEncoder().encode(delivery.body),
  });
  return { id: delivery.event.id, status: answer.status };
}

async function setup() {
  const pool = connectPostgres();
  const table = uniqueTable('handler_commit');
  const app = uniqueTable('handler_commit_app');
  const logger = recordingLogger();
  const store = createPostgresStore({ pool, table, cleanupIntervalMs: 0, logger });
  await store.migrate();
  await pool.query(`CREATE TABLE ${app} (event_id text NOT NULL)`);
  const receiver = createReceiver({ secret, store, logger: recordingLogger(), mode: 'inline' });
  const rows = async (id: string): Promise<number> =>
    (await pool.query(`SELECT count(*)::int AS n FROM ${app} WHERE event_id = $1`, [id])).rows[0].n;
  const done = async (id: string) =>
    (await pool.query(`SELECT token IS NULL OR committed AS done FROM ${table} WHERE id = $1`, [id])).rows[0];
  // What the store said about handlers ending the transaction.
  const ended = () => logger.lines.filter((line) => line.msg?.includes('ended the event transaction'));
  return { app, receiver, rows, done, ended };
}

describe.skipIf(!postgresUrl)(
  'a handler that runs COMMIT or ROLLBACK on the event transaction itself',
  () => {
    it('warns once, naming the fix, when handlers commit their writes themselves, and still marks each event done', async () => {
      const { app, receiver, rows, done, ended } = await setup();
      // pg code ported as it was: BEGIN ... COMMIT around the writes.
      receiver.on('leave.approved', async (event, ctx) => {
        const db = await ctx.transaction();
        await db.query('BEGIN');
        await db.query(`INSERT INTO ${app} VALUES ($1)`, [event.id]);
        await db.query('COMMIT');
      });
      const first = await post(receiver);
      const second = await post(receiver);
      expect({ first: first.status, second: second.status }).toEqual({ first: 200, second: 200 });
      expect([await rows(first.id), await rows(second.id)]).toEqual([1, 1]);
      expect([await done(first.id), await done(second.id)]).toEqual([{ done: true }, { done: true }]);
      expect(ended()).toHaveLength(1);
      expect(ended()[0]).toMatchObject({ level: 'warn', obj: { eventId: first.id } });
      expect(ended()[0]!.msg).toMatch(/not exactly once; run neither: the receiver commits/);
      await receiver.close();
    });

    it('says nothing when handlers leave the commit to the receiver, or roll back to a savepoint of their own', async () => {
      const { app, receiver, rows, ended } = await setup();
      receiver.on('leave.approved', async (event, ctx) => {
        const db = await ctx.transaction();
        await db.query('SAVEPOINT attempt_step');
        await db.query(`INSERT INTO ${app} VALUES ('undone')`);
        await db.query('ROLLBACK TO SAVEPOINT attempt_step');
        await db.query(`INSERT INTO ${app} VALUES ($1)`, [event.id]);
      });
      const delivered = await post(receiver);
      expect(delivered.status).toBe(200);
      expect(await rows(delivered.id)).toBe(1);
      expect(await rows('undone')).toBe(0);
      expect(ended()).toEqual([]);
      await receiver.close();
    });
  },
);
