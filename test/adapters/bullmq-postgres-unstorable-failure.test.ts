// BullMQ on Postgres records a failure whose message, class or stack trace holds a NUL or a lone surrogate (text
// Postgres refuses): the attempt is retried and the event ends a dead letter with that text made storable (U+FFFD in
// place), rather than the failure's record refused and the job left to stall with the event in no list.
import { createPostgresBackend } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createMemoryStore,
  createReceiver,
  type DeadLetter,
  type QueuedEvent,
  type Receiver,
  silentLogger,
  type WorkforceEvent,
} from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { postgresUrl } from '../setup/postgres-helpers.js';
import { uniqueName } from '../setup/redis-helpers.js';

const secret = 'whsec_bullmq_postgres_unstorable_failure';
// A name pasted with a NUL, and half of an emoji cut off where a field was truncated.
const data = { leaveRequestId: crypto.randomUUID(), employeeName: 'Zo\u0000ë \ud83d' };

const toClose: { close(): unknown }[] = [];
afterEach(async () => {
  for (const each of toClose.splice(0).reverse()) await each.close();
});

const queueOn = (label: string) =>
  createBullmqQueue({
    backend: createPostgresBackend,
    connection: { connectionString: postgresUrl, migrate: true, max: 4 },
    name: uniqueName(label),
    attempts: 2,
    backoff: () => 0,
    // A job left to stall would be taken back within a second: it would run again, not pass for retried.
    lockDurationMs: 1000,
    stalledIntervalMs: 500,
  });

async function deliver(receiver: Receiver, event: { id: string; type: string }): Promise<number> {
  const delivery = await createSignedDelivery({ secret, ...event, data: data as never });
  const answer = await receiver.handle({
    method: 'POST',
    headers: delivery.headers,
    body: new TextEncoder().encode(delivery.body),
  });
  return answer.status;
}

describe.skipIf(!postgresUrl)('BullMQ on Postgres: a failure whose text Postgres refuses', () => {
  it('from an ordering key function quoting the event: retried, then a dead letter with its text made storable', {
    timeout: 120_000,
  }, async () => {
    const dead: DeadLetter[] = [];
    let failing = true;
    let keyed = 0;
    const receiver = createReceiver({
      secret,
      store: createMemoryStore(),
      queue: queueOn('pg-unstorable-key'),
      logger: silentLogger,
      ordering: {
        // A key function that throws fails the attempt as a handler would, with its own error.
        key: (event: WorkforceEvent) => {
          keyed++;
          if (!failing) return undefined;
          const error = new Error(`no record key for ${(event.data as typeof data).employeeName}`);
          error.name = 'Key\ud800Error';
          throw error;
        },
      },
      onDeadLetter: (letter) => {
        dead.push(letter);
      },
    });
    toClose.push(receiver);
    const handled: unknown[] = [];
    receiver.on('leave.approved', (event) => {
      handled.push(event.data);
    });
    const id = crypto.randomUUID();
    expect(await deliver(receiver, { id, type: 'leave.approved' })).toBe(202);
    await expect.poll(() => dead.length, { timeout: 60_000, interval: 100 }).toBe(1);
    expect(dead[0]!.attempts).toBe(2);
    expect(dead[0]!.event.data).toEqual(data);
    expect(dead[0]!.error).toMatchObject({
      name: 'Key\uFFFDError',
      message: 'no record key for Zo\uFFFDë \uFFFD',
    });

    const [letter] = (await receiver.deadLetters()).items;
    expect(letter?.event.id).toBe(id);
    expect(letter?.event.data).toEqual(data);
    expect(letter?.attempts).toBe(2);
    expect(letter?.error).toMatchObject({
      name: 'Key\uFFFDError',
      message: 'no record key for Zo\uFFFDë \uFFFD',
    });

    failing = false;
    const before = keyed;
    expect(await receiver.replay(id)).toBe(true);
    await expect.poll(() => handled.length, { timeout: 60_000, interval: 100 }).toBe(1);
    expect(handled[0]).toEqual(data);
    expect(keyed).toBeGreaterThan(before);
    await expect.poll(async () => (await receiver.deadLetters()).items.length, { timeout: 30_000 }).toBe(0);
  });

  it('from an app’s own processing on the queue: message, stack and cause, each kept storable', {
    timeout: 120_000,
  }, async () => {
    const queue = queueOn('pg-unstorable-process');
    toClose.push(queue);
    const dead: DeadLetter[] = [];
    const runs: string[] = [];
    const failures: Record<string, () => Error> = {
      // The message holds both; the stack BullMQ keeps starts with it.
      message: () => new Error('refused: \u0000 and \udc00'),
      // A clean message, with a stack a library rewrote holding a lone surrogate.
      stack: () => Object.assign(new Error('refused'), { stack: 'Error: refused\n    at \ud83d (remote)' }),
      // A clean message, its cause's holding a NUL.
      cause: () => new Error('refused', { cause: new Error('\u0000') }),
    };
    queue.start({
      process: async (job: QueuedEvent) => {
        const kind = job.event.type.split('.')[1]!;
        runs.push(kind);
        throw failures[kind]!();
      },
      onDeadLetter: async (letter) => {
        dead.push(letter);
      },
      logger: silentLogger,
    });
    for (const kind of Object.keys(failures))
      await queue.enqueue({
        event: (await createSignedDelivery({ secret, type: `failure.${kind}`, data: data as never })).event,
        deliveryId: undefined,
      });
    await expect.poll(() => dead.length, { timeout: 60_000, interval: 100 }).toBe(3);
    // Each ran twice: its first failure was recorded as a retry, not left to stall.
    expect(runs.sort()).toEqual(['cause', 'cause', 'message', 'message', 'stack', 'stack']);
    const letters = (await queue.deadLetters()).items;
    const messageOf = (kind: string): unknown =>
      letters.find((letter) => letter.event.type === `failure.${kind}`)?.error;
    expect(messageOf('message')).toMatchObject({ message: 'refused: \uFFFD and \uFFFD' });
    expect(messageOf('stack')).toMatchObject({ message: 'refused' });
    expect(messageOf('cause')).toMatchObject({ message: 'refused' });
    for (const letter of letters) {
      expect(letter.event.data).toEqual(data);
      expect(letter.attempts).toBe(2);
    }
  });
});
