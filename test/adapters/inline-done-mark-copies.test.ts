// Inline mode on a real PostgreSQL: a copy that reaches the process while a run's done mark is on its way to the
// store is answered 409, and never takes the lease that lapsed while the handler ran (the store's connections
// would let its claim land before the done mark sent ahead of it).
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createReceiver, type DedupeStore, type Receiver, silentLogger } from 'workforce-webhooks';
import { createPostgresStore } from 'workforce-webhooks/postgres';
import { createSignedDelivery, type SignedDelivery } from 'workforce-webhooks/testing';
import { connectPostgres, postgresUrl, uniqueTable } from '../setup/postgres-helpers.js';

const secret = 'whsec_inline_done_mark_copies_test';
const encoder = new TextEncoder();

const handle = (receiver: Receiver, delivery: SignedDelivery<string>) =>
  receiver.handle({ method: 'POST', headers: delivery.headers, body: encoder.encode(delivery.body) });

describe.skipIf(!postgresUrl)(
  'inline mode: copies of an event while its done mark is sent (Postgres store)',
  () => {
    it('answers a copy 409 until the done mark landed, then 200 duplicate, and runs the event once', async () => {
      const pool = connectPostgres();
      const table = uniqueTable('inline_mark');
      const postgres = createPostgresStore({ pool, table, cleanupIntervalMs: 0 });
      await postgres.migrate();
      let marking: () => void = () => {};
      const markSent = new Promise<void>((resolve) => {
        marking = resolve;
      });
      // The real store, its done mark reaching the server 300 ms late (a distant database, a busy pool).
      const store: DedupeStore = Object.assign(Object.create(postgres) as DedupeStore, {
        complete: async (...args: Parameters<DedupeStore['complete']>) => {
          marking();
          await sleep(300);
          return postgres.complete(...args);
        },
      });
      const receiver = createReceiver({ secret, mode: 'inline', logger: silentLogger, store });
      let runs = 0;
      receiver.on('leave.approved', async (event) => {
        runs++;
        // The lease lapses while the handler runs, as when it held the event loop past it: no renewal got in.
        await pool.query(`UPDATE ${table} SET expires_at = now() - interval '1 second' WHERE id = $1`, [
          event.id,
        ]);
      });
      const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
      const first = handle(receiver, delivery);
      await markSent;
      const copy = await handle(receiver, delivery);
      expect((await first).status).toBe(200);
      const after = await handle(receiver, delivery);
      expect({ runs, copy: copy.status, after: [after.status, JSON.parse(after.body)] }).toEqual({
        runs: 1,
        copy: 409,
        after: [200, { received: true, duplicate: true }],
      });
      await receiver.close();
    });
  },
);
