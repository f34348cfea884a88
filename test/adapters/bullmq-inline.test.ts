// Inline mode on BullMQ (a real Redis): a run that fails after its 202 is handed over as the queue's failed attempt.
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  type Backoff,
  createReceiver,
  type DeadLetter,
  type DedupeStore,
  type FetchPlatform,
  type Receiver,
} from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createRedisStore } from 'workforce-webhooks/redis';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { deferred } from '../contract/adapter-client.js';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';
import { recordingLogger } from '../support/logger.js';
import { until } from '../support/ordering-scenario.js';

const secret = 'whsec_bullmq_inline_test';
const encoder = new TextEncoder();

// An inline receiver (ack deadline 50 ms) on a Redis store and a BullMQ queue of its own, closed after the test.
function inlineReceiver(
  { attempts, backoff = () => 10 }: { readonly attempts: number; readonly backoff?: Backoff },
  { store, letters }: { readonly store?: DedupeStore; readonly letters?: DeadLetter[] } = {},
): Receiver {
  const name = uniqueName('bullmq-inline');
  const receiver = createReceiver({
    secret,
    mode: 'inline',
    ackDeadlineMs: 50,
    store: store ?? createRedisStore({ client: connectRedis(), prefix: `${name}:` }),
    queue: createBullmqQueue({ connection: connectRedis(), name, attempts, backoff }),
    logger: recordingLogger(),
    onDeadLetter: (letter) => void letters?.push(letter),
  });
  onTestFinished(() => receiver.close({ timeoutMs: 3000 }));
  return receiver;
}

// Every attempt fails; the first once the sender has its 202 (`answered`), at `failedAt`.
function alwaysFailing(receiver: Receiver) {
  const answered = deferred();
  const state = { attempts: [] as number[], failedAt: 0, startedAt: [] as number[] };
  receiver.on('leave.approved', async (_event, ctx) => {
    state.attempts.push(ctx.attempt);
    state.startedAt.push(performance.now());
    if (ctx.attempt === 1) {
      await answered.promise;
      state.failedAt = performance.now();
    }
    throw new TypeError('the calendar is down');
  });
  return { state, answered: () => answered.resolve() };
}

async function post(receiver: Receiver) {
  const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
  const input = { method: 'POST', headers: delivery.headers, body: encoder.encode(delivery.body) };
  return { event: delivery.event, input, answer: await receiver.handle(input) };
}

describe.skipIf(!redisUrl)('inline run handed over to BullMQ', () => {
  it('counts the inline attempt: 3 attempts in all, then one dead letter with attempts 3', async () => {
    const letters: DeadLetter[] = [];
    const receiver = inlineReceiver({ attempts: 3 }, { letters });
    const { state, answered } = alwaysFailing(receiver);
    const { event, input, answer } = await post(receiver);
    expect(answer.status).toBe(202);
    expect((await receiver.handle(input)).status).toBe(409);
    answered();
    await until(() => letters.length === 1, 'the dead letter');
    expect(state.attempts).toEqual([1, 2, 3]);
    expect(letters[0]!.attempts).toBe(3);
    const page = await receiver.deadLetters();
    expect(page.items.map((letter) => [letter.event.id, letter.attempts])).toEqual([[event.id, 3]]);
  });

  it("starts the queue's attempt 2 after the backoff for attempt 1, not at once", async () => {
    const asked: number[] = [];
    const backoff = (attempt: number): number => {
      asked.push(attempt);
      return attempt === 1 ? 600 : 10;
    };
    const receiver = inlineReceiver({ attempts: 2, backoff });
    const { state, answered } = alwaysFailing(receiver);
    const { answer } = await post(receiver);
    expect(answer.status).toBe(202);
    answered();
    await until(() => state.attempts.length === 2, 'attempt 2');
    expect(asked).toContain(1);
    expect(state.startedAt[1]! - state.failedAt).toBeGreaterThanOrEqual(550);
  });

  it('with attempts: 1, makes the event a dead letter at once (attempts 1, the inline failure), replayable once', async () => {
    const letters: DeadLetter[] = [];
    const receiver = inlineReceiver({ attempts: 1 }, { letters });
    const { state, answered } = alwaysFailing(receiver);
    const { event, answer } = await post(receiver);
    expect(answer.status).toBe(202);
    answered();
    await until(() => letters.length === 1, 'the dead letter');
    expect(state.attempts).toEqual([1]);
    expect(letters[0]!.attempts).toBe(1);
    const [listed] = (await receiver.deadLetters()).items;
    expect(listed).toMatchObject({ event: { id: event.id }, attempts: 1 });
    // BullMQ keeps the failure's class and message.
    expect((listed!.error as Error).name).toBe('TypeError');
    // A replay gets the one attempt the app gives an event: it runs once and is a dead letter again.
    expect(await receiver.replay(event.id)).toBe(true);
    await until(() => letters.length === 2, 'the replay');
    expect(state.attempts).toEqual([1, 1]);
    expect(letters[1]!.attempts).toBe(1);
  });

  it('the promise handed to waitUntil covers the done mark of the handed-over event (Redis answering in 200 ms)', async () => {
    const name = uniqueName('bullmq-inline-mark');
    const redisStore = createRedisStore({ client: connectRedis(), prefix: `${name}:` });
    // The same Redis store, its done mark answered 200 ms later (a distant Redis; well under storeTimeoutMs).
    const store: DedupeStore = Object.assign(Object.create(redisStore) as DedupeStore, {
      complete: async (...args: Parameters<DedupeStore['complete']>) => {
        await new Promise((resolve) => setTimeout(resolve, 200));
        return redisStore.complete(...args);
      },
    });
    const receiver = inlineReceiver({ attempts: 3 }, { store });
    const answered = deferred();
    receiver.on('leave.approved', async (_event, ctx) => {
      if (ctx.attempt > 1) return;
      await answered.promise;
      throw new Error('down once');
    });
    const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
    const kept: Promise<unknown>[] = [];
    const platform: FetchPlatform = { waitUntil: (promise) => void kept.push(promise) };
    const response = await receiver.fetch(
      delivery.toRequest('http://localhost/webhooks/workforce'),
      platform,
    );
    expect(response.status).toBe(202);
    answered.resolve();
    await Promise.all(kept);
    // The platform may freeze the function now: the id must already be marked done in the store.
    expect((await redisStore.claim(delivery.event.id, 30_000)).status).toBe('done');
  });
});
