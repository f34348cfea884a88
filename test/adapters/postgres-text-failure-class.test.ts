// BullMQ on Postgres records a handler failure whose class name holds a NUL (which jsonb refuses): the dead letter
// keeps that class, made storable, and replays like any other, instead of the failure's record being refused.
import { createPostgresBackend } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryStore, createReceiver, type DeadLetter, silentLogger } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { postgresUrl } from '../setup/postgres-helpers.js';
import { uniqueName } from '../setup/redis-helpers.js';

const secret = 'whsec_postgres_text_failure_class';

const toClose: { close(): unknown }[] = [];
afterEach(async () => {
  for (const each of toClose.splice(0).reverse()) await each.close();
});

describe.skipIf(!postgresUrl)('BullMQ on Postgres: a handler failure whose class name holds a NUL', () => {
  it('dead-letters the event with that class, readable and replayable', { timeout: 120_000 }, async () => {
    const dead: DeadLetter[] = [];
    const receiver = createReceiver({
      secret,
      store: createMemoryStore(),
      queue: createBullmqQueue({
        backend: createPostgresBackend,
        connection: { connectionString: postgresUrl, migrate: true, max: 4 },
        name: uniqueName('pg-text-class'),
        attempts: 1,
      }),
      logger: silentLogger,
      onDeadLetter: (letter) => {
        dead.push(letter);
      },
    });
    toClose.push(receiver);
    let failing = true;
    let ran = 0;
    receiver.on('leave.approved', async () => {
      ran++;
      if (!failing) return;
      // A class named after a remote error's name, as a client library may set it.
      const error = new Error('the leave service answered 500');
      error.name = 'Remote\u0000Error';
      throw error;
    });
    const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
    const answer = await receiver.handle({
      method: 'POST',
      headers: delivery.headers,
      body: new TextEncoder().encode(delivery.body),
    });
    expect(answer.status).toBe(202);
    await expect.poll(() => dead.length, { timeout: 60_000, interval: 100 }).toBe(1);

    const [letter] = (await receiver.deadLetters()).items;
    expect(letter?.event).toEqual(delivery.event);
    // The class the dead-letter list shows is the handler's, not Postgres refusing the record of it.
    expect(letter?.error).toMatchObject({
      name: 'Remote\uFFFDError',
      message: 'workforce-webhooks: 1 handler(s) failed',
    });

    failing = false;
    expect(await receiver.replay(delivery.event.id)).toBe(true);
    await expect.poll(() => ran, { timeout: 60_000, interval: 100 }).toBe(2);
    await expect.poll(async () => (await receiver.deadLetters()).items.length, { timeout: 30_000 }).toBe(0);
  });
});
