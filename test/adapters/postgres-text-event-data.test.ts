// Postgres refuses a NUL in text and jsonb, and a lone surrogate escaped in jsonb, while JSON allows both: on BullMQ's
// Postgres backend a signed event holding them (a free-text field pasted from somewhere) is still accepted and
// handled with its exact data, and a failure whose message holds them still ends as a readable, replayable letter.
import { createPostgresBackend } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createReceiver,
  type DeadLetter,
  type Receiver,
  silentLogger,
  type WorkforceEvent,
} from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createPostgresStore } from 'workforce-webhooks/postgres';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { connectPostgres, postgresUrl, uniqueTable } from '../setup/postgres-helpers.js';
import { uniqueName } from '../setup/redis-helpers.js';

const secret = 'whsec_postgres_text_event_data';
const encoder = new TextEncoder();
// A leave reason pasted with a NUL, and half of an emoji cut off where a field was truncated.
const data = { leaveRequestId: crypto.randomUUID(), reason: 'sick\u0000leave', note: 'flight \ud83d 李 ✈️' };

const toClose: { close(): unknown }[] = [];
afterEach(async () => {
  for (const each of toClose.splice(0).reverse()) await each.close();
});

async function deliver(receiver: Receiver, id: string): Promise<number> {
  const delivery = await createSignedDelivery({ secret, type: 'leave.approved', id, data: data as never });
  const answer = await receiver.handle({
    method: 'POST',
    headers: delivery.headers,
    body: encoder.encode(delivery.body),
  });
  return answer.status;
}

async function postgresReceiver(
  attempts: number,
  onDeadLetter?: (letter: DeadLetter) => void,
  url = postgresUrl,
): Promise<Receiver> {
  const store = createPostgresStore({
    pool: connectPostgres(url),
    table: uniqueTable('text'),
    logger: silentLogger,
  });
  toClose.push(store);
  await store.migrate();
  const receiver = createReceiver({
    secret,
    store,
    queue: createBullmqQueue({
      backend: createPostgresBackend,
      connection: { connectionString: url, migrate: true, max: 4 },
      name: uniqueName('pg-text-data'),
      attempts,
      backoff: () => 0,
    }),
    logger: silentLogger,
    ...(onDeadLetter === undefined ? {} : { onDeadLetter }),
  });
  toClose.push(receiver);
  return receiver;
}

describe.skipIf(!postgresUrl)('BullMQ on Postgres: text Postgres refuses', () => {
  it('accepts an event whose data holds a NUL and a lone surrogate and hands the handler its exact data', {
    timeout: 120_000,
  }, async () => {
    const receiver = await postgresReceiver(3);
    const seen: unknown[] = [];
    receiver.on('leave.approved', async (event: WorkforceEvent) => {
      seen.push(event.data);
    });
    const id = crypto.randomUUID();
    expect(await deliver(receiver, id)).toBe(202);
    await expect.poll(() => seen.length, { timeout: 60_000, interval: 100 }).toBe(1);
    expect(seen[0]).toEqual(data);
    // A copy is a duplicate, as any event's.
    expect(await deliver(receiver, id)).toBe(200);
  });

  it('retries and dead-letters a failure whose message holds a NUL, readable and replayable with the exact event', {
    timeout: 120_000,
  }, async () => {
    const dead: DeadLetter[] = [];
    const receiver = await postgresReceiver(2, (letter) => {
      dead.push(letter);
    });
    let failing = true;
    const seen: unknown[] = [];
    receiver.on('leave.approved', async (event: WorkforceEvent) => {
      seen.push(event.data);
      if (failing) throw new Error(`reason "${(event.data as typeof data).reason}" refused`);
    });
    const id = crypto.randomUUID();
    expect(await deliver(receiver, id)).toBe(202);
    await expect.poll(() => dead.length, { timeout: 60_000, interval: 100 }).toBe(1);
    // Both attempts ran: the first failure was recorded, not left to stall.
    expect(seen).toEqual([data, data]);
    expect(dead[0]!.event.data).toEqual(data);
    expect(dead[0]!.attempts).toBe(2);

    const [letter] = (await receiver.deadLetters()).items;
    expect(letter?.event.id).toBe(id);
    expect(letter?.event.data).toEqual(data);
    // The failure BullMQ recorded is the handlers', not Postgres refusing its text.
    expect(letter?.error).toMatchObject({ message: 'workforce-webhooks: 1 handler(s) failed' });
    expect((await receiver.deadLetters({ type: 'leave.approved' })).items).toHaveLength(1);

    failing = false;
    expect(await receiver.replay(id)).toBe(true);
    await expect.poll(() => seen.length, { timeout: 60_000, interval: 100 }).toBe(3);
    expect(seen[2]).toEqual(data);
    await expect.poll(async () => (await receiver.deadLetters()).items.length, { timeout: 30_000 }).toBe(0);
  });
});
