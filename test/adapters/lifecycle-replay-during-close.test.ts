// Dead-letter replays (one, or in bulk) of BullMQ under way when close() is called (a deploy during an operator's
// replay): the replays under way end before the connections close, and every letter is replayed or left replayable.
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  createReceiver,
  type DeadLetter,
  type Receiver,
  silentLogger,
  WebhookError,
} from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createRedisStore } from 'workforce-webhooks/redis';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';

const secret = 'whsec_lifecycle_replay_during_close';

describe.skipIf(!redisUrl)('dead-letter replays under way when close() is called, BullMQ queue', () => {
  it('ends every replay it started before closing: each letter replayed, or replayable by the next instance at once', {
    timeout: 120_000,
  }, async () => {
    const name = uniqueName('replay-close');
    let failing = true;
    const processed = new Set<string>();
    const letters: DeadLetter[] = [];
    const make = (): Receiver =>
      createReceiver({
        secret,
        logger: silentLogger,
        store: createRedisStore({ client: connectRedis(), prefix: `${name}:store:` }),
        queue: createBullmqQueue({ connection: connectRedis(), name, attempts: 1 }),
        onDeadLetter: (letter) => void letters.push(letter),
      }).on('leave.approved', (event) => {
        if (failing) throw new Error('the calendar is down');
        processed.add(event.id);
      });
    const first = make();
    const deliveries = await Promise.all(
      Array.from({ length: 40 }, () => createSignedDelivery({ secret, type: 'leave.approved' })),
    );
    for (const delivery of deliveries) {
      const answer = await first.handle({ method: 'POST', headers: delivery.headers, body: delivery.body });
      expect(answer.status).toBe(202);
    }
    await expect.poll(() => letters.length, { timeout: 30_000 }).toBe(deliveries.length);
    failing = false;

    // The deploy comes as the first letter is replayed: the other replays under way are between their round trips.
    let closing: Promise<void> | undefined;
    const bulk = first
      .replayDeadLetters(
        {},
        {
          concurrency: 8,
          onProgress: () => {
            closing ??= first.close({ timeoutMs: 5000 });
          },
        },
      )
      .then(
        (result) => ({ result }),
        (error: unknown) => ({ error }),
      );
    const outcome = await bulk;
    await closing;
    // Stopped by the close: said with the package's code, never a bare client error ("Connection is closed").
    if ('error' in outcome) {
      expect(outcome.error).toBeInstanceOf(WebhookError);
      expect((outcome.error as WebhookError).code).toBe('shutting_down');
    }

    // The next instance replays what is left at once (no letter held by a replay that never finished), and runs all.
    const second = make();
    onTestFinished(() => second.close({ timeoutMs: 5000 }));
    const rest = await second.replayDeadLetters();
    expect(rest.failed).toBe(0);
    await expect.poll(() => processed.size, { timeout: 60_000 }).toBe(deliveries.length);
    expect((await second.deadLetters()).items).toEqual([]);
  });

  it('lets a replay between its two round trips end before it closes the connections: the letter runs, once', {
    timeout: 120_000,
  }, async () => {
    const name = uniqueName('replay-close-one');
    let failing = true;
    const processed: string[] = [];
    const letters: DeadLetter[] = [];
    const make = (): Receiver =>
      createReceiver({
        secret,
        logger: silentLogger,
        store: createRedisStore({ client: connectRedis(), prefix: `${name}:store:` }),
        queue: createBullmqQueue({ connection: connectRedis(), name, attempts: 1 }),
        onDeadLetter: (letter) => void letters.push(letter),
      }).on('leave.approved', (event) => {
        if (failing) throw new Error('the calendar is down');
        processed.push(event.id);
      });
    const first = make();
    const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
    const answer = await first.handle({ method: 'POST', headers: delivery.headers, body: delivery.body });
    expect(answer.status).toBe(202);
    await expect.poll(() => letters.length, { timeout: 30_000 }).toBe(1);
    failing = false;

    // Redis holds every write for a second: the replay's reset waits there, its retry still to send, as close() runs.
    await connectRedis().call('CLIENT', 'PAUSE', '1000', 'WRITE');
    const replayed = first.replay(delivery.event.id).then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    await first.close({ timeoutMs: 5000 });
    // Before: rejected with ioredis's bare "Connection is closed.", the letter reset and claimed but never retried.
    expect(await replayed).toEqual({ value: true });

    const second = make();
    onTestFinished(() => second.close({ timeoutMs: 5000 }));
    await expect.poll(() => processed, { timeout: 60_000 }).toEqual([delivery.event.id]);
    expect((await second.deadLetters()).items).toEqual([]);
  });
});
