// Inline mode on a real Redis that goes silent (SIGSTOP): the answer comes within `ackDeadlineMs` of the claim,
// whatever the claim and the done mark take within their own deadlines, and the event still runs once.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { createReceiver, type Receiver, silentLogger } from 'workforce-webhooks';
import { createRedisStore } from 'workforce-webhooks/redis';
import { createSignedDelivery, type SignedDelivery } from 'workforce-webhooks/testing';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';
import { hasRedisServer, type RedisServer, startRedisServer } from '../setup/redis-server.js';

const secret = 'whsec_inline_answer_deadline_test';
const encoder = new TextEncoder();
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const handle = (receiver: Receiver, delivery: SignedDelivery<string>) =>
  receiver.handle({ method: 'POST', headers: delivery.headers, body: encoder.encode(delivery.body) });

// An inline receiver on its own redis-server, whose store calls may each wait `storeTimeoutMs` (20 s): far past
// the answer's deadline, so only the answer's own deadline can bound it.
async function setUp(ackDeadlineMs: number): Promise<{ redis: RedisServer; receiver: Receiver }> {
  const redis = await startRedisServer();
  cleanups.push(() => redis.dispose());
  const receiver = createReceiver({
    secret,
    mode: 'inline',
    ackDeadlineMs,
    storeTimeoutMs: 20_000,
    logger: silentLogger,
    store: createRedisStore({ client: connectRedis(redis.url), prefix: `${uniqueName('answer')}:` }),
  });
  cleanups.push(async () => {
    redis.resume();
    await receiver.close({ timeoutMs: 5000 });
  });
  return { redis, receiver };
}

describe.skipIf(!redisUrl || !hasRedisServer())('inline answer deadline under a silent store', () => {
  it('answers 200 by ackDeadlineMs while the done mark waits on the store, copies 409 until it lands, the event run once', {
    timeout: 60_000,
  }, async () => {
    const { redis, receiver } = await setUp(1500);
    let runs = 0;
    receiver.on('leave.approved', () => {
      runs++;
      // The store stops answering as the handlers end: the done mark waits for it.
      redis.pause();
    });
    const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
    const pending = handle(receiver, delivery);
    // A wide bound on a hang: the done mark alone could hold the answer 20 s.
    const first = await Promise.race([pending, sleep(15_000).then(() => undefined)]);
    const copy = await handle(receiver, delivery);
    redis.resume();
    await first?.background;
    const after = await handle(receiver, delivery);
    expect({
      first: first?.status,
      copy: [copy.status, JSON.parse(copy.body)],
      after: [after.status, JSON.parse(after.body)],
      runs,
    }).toEqual({
      first: 200,
      copy: [409, { error: 'in_progress' }],
      after: [200, { received: true, duplicate: true }],
      runs: 1,
    });
  });

  it('answers 500 by ackDeadlineMs while the release waits on the store, and the retry runs the event once it landed', {
    timeout: 60_000,
  }, async () => {
    const { redis, receiver } = await setUp(1500);
    let runs = 0;
    receiver.on('leave.approved', () => {
      runs++;
      if (runs > 1) return;
      // The store stops answering as the handler fails: the release waits for it.
      redis.pause();
      throw new Error('the first attempt fails');
    });
    const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
    const pending = handle(receiver, delivery);
    const first = await Promise.race([pending, sleep(15_000).then(() => undefined)]);
    const copy = await handle(receiver, delivery);
    redis.resume();
    await first?.background;
    const retry = await handle(receiver, delivery);
    expect({
      first: first?.status,
      copy: [copy.status, JSON.parse(copy.body)],
      retry: [retry.status, JSON.parse(retry.body)],
      runs,
    }).toEqual({
      first: 500,
      copy: [409, { error: 'in_progress' }],
      retry: [200, { received: true }],
      runs: 2,
    });
  });

  it('counts a slow claim against ackDeadlineMs: 202 by then from the claim, the run then finishing once', {
    timeout: 60_000,
  }, async () => {
    const ackDeadlineMs = 4000;
    const { redis, receiver } = await setUp(ackDeadlineMs);
    let runs = 0;
    let finish: () => void = () => {};
    const finished = new Promise<void>((resolve) => {
      finish = resolve;
    });
    receiver.on('leave.approved', async () => {
      runs++;
      await finished;
    });
    const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
    // The claim waits 3 s on the silent store, within its own deadline; the handler then runs past the rest.
    redis.pause();
    const sent = performance.now();
    const pending = handle(receiver, delivery);
    await sleep(3000);
    redis.resume();
    const first = await pending;
    // Counted from the claim the answer comes near 4 s; from the run's start it would come near 7 s.
    const answeredMs = performance.now() - sent;
    finish();
    await first.background;
    const after = await handle(receiver, delivery);
    expect({
      first: first.status,
      inTime: answeredMs < ackDeadlineMs + 1500,
      after: [after.status, JSON.parse(after.body)],
      runs,
    }).toEqual({ first: 202, inTime: true, after: [200, { received: true, duplicate: true }], runs: 1 });
  });
});
