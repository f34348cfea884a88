// close() in inline mode on real Redis and PostgreSQL: the done marks and releases that end the last runs are sent
// before it resolves, so the store's client can be closed right after it, as the README's SIGTERM handlers do.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createReceiver, type Receiver, silentLogger } from 'workforce-webhooks';
import { createPostgresStore } from 'workforce-webhooks/postgres';
import { createRedisStore } from 'workforce-webhooks/redis';
import { createSignedDelivery, type SignedDelivery } from 'workforce-webhooks/testing';
import { connectPostgres, postgresUrl, uniqueTable } from '../setup/postgres-helpers.js';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';

const secret = 'whsec_inline_close_marks_test';
const encoder = new TextEncoder();

const handle = (receiver: Receiver, delivery: SignedDelivery<string>) =>
  receiver.handle({ method: 'POST', headers: delivery.headers, body: encoder.encode(delivery.body) });

// A handler that finishes while close() waits, and one that ignores its signal and is cut short by close().
const finishes = 150;
const outlasts = 3000;

// Registers a handler that sleeps `ms`; resolves once it started.
function sleeper(receiver: Receiver, ms: number): Promise<void> {
  return new Promise<void>((started) => {
    receiver.on('leave.approved', async () => {
      started();
      await sleep(ms);
    });
  });
}

describe.skipIf(!redisUrl)('close() in inline mode, Redis store closed right after it', () => {
  async function closeDuring(handlerMs: number, timeoutMs: number, claimInFlight = false) {
    const prefix = `${uniqueName('inline-close-marks')}:`;
    const client = connectRedis();
    const receiver = createReceiver({
      secret,
      mode: 'inline',
      logger: silentLogger,
      store: createRedisStore({ client, prefix }),
    });
    const started = sleeper(receiver, handlerMs);
    const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
    const answer = handle(receiver, delivery);
    // Its claim sent, not yet answered: close() begins before the run does.
    if (!claimInFlight) await started;
    await receiver.close({ timeoutMs });
    await client.quit();
    const { status } = await answer;
    return { status, key: await connectRedis().get(`${prefix}${delivery.event.id}`) };
  }

  it('marks a run that finished while close() waited done: a redelivery stays a duplicate', async () => {
    expect(await closeDuring(finishes, 5000)).toEqual({ status: 200, key: 'done' });
  });

  it("releases the claim of a run close() cut short, so the sender's retry is not held off for a lease", async () => {
    expect(await closeDuring(outlasts, 200)).toEqual({ status: 503, key: null });
  });

  it('releases a claim that lands after close() began', async () => {
    expect(await closeDuring(finishes, 5000, true)).toEqual({ status: 503, key: null });
  });
});

describe.skipIf(!postgresUrl)('close() in inline mode, Postgres store closed right after it', () => {
  async function closeDuring(handlerMs: number, timeoutMs: number) {
    const pool = connectPostgres();
    const table = uniqueTable('inline_close');
    const store = createPostgresStore({ pool, table, cleanupIntervalMs: 0 });
    await store.migrate();
    const receiver = createReceiver({ secret, mode: 'inline', logger: silentLogger, store });
    const started = sleeper(receiver, handlerMs);
    const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
    const answer = handle(receiver, delivery);
    await started;
    await receiver.close({ timeoutMs });
    store.close();
    await pool.end();
    const { status } = await answer;
    const { rows } = await connectPostgres().query(`SELECT token FROM ${table} WHERE id = $1`, [
      delivery.event.id,
    ]);
    return { status, rows };
  }

  it('marks a run that finished while close() waited done', async () => {
    expect(await closeDuring(finishes, 5000)).toEqual({ status: 200, rows: [{ token: null }] });
  });

  it('releases the claim of a run close() cut short', async () => {
    expect(await closeDuring(outlasts, 200)).toEqual({ status: 503, rows: [] });
  });
});
