// Redis store × memory queue across a graceful restart (receiver.close(), then a new receiver on the same Redis): the
// done ids survive, so every redelivery stays a duplicate, and an event waiting out a long backoff goes to onDeadLetter.
import { describe, expect, it } from 'vitest';
import { createMemoryQueue, createReceiver, type DeadLetter, type Receiver } from 'workforce-webhooks';
import { createRedisStore } from 'workforce-webhooks/redis';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';
import { recordingLogger } from '../support/logger.js';
import { serveReceiver, signedDeliveries } from './outage.js';

const secret = 'whsec_redis_store_restart';

describe.skipIf(!redisUrl)('Redis store, memory queue: a graceful restart', () => {
  it('answers every redelivery after the restart 200 duplicate and runs none again; the event left in backoff is a dead letter', {
    timeout: 60_000,
  }, async () => {
    const prefix = `${uniqueName('restart')}:`;
    const runs = new Map<string, number>();
    const dead: DeadLetter[] = [];
    const instance = (): Receiver => {
      const receiver = createReceiver({
        secret,
        logger: recordingLogger(),
        store: createRedisStore({ client: connectRedis(), prefix }),
        // A backoff far past the close's deadline: the failing event cannot run again before the process ends.
        queue: createMemoryQueue({ attempts: 3, backoff: () => 600_000 }),
        onDeadLetter: (letter) => void dead.push(letter),
      });
      const count = (id: string) => runs.set(id, (runs.get(id) ?? 0) + 1);
      receiver.on('leave.approved', (event) => void count(event.id));
      receiver.on('leave.rejected', (event) => {
        count(event.id);
        throw new Error('payroll is down');
      });
      return receiver;
    };

    const first = await serveReceiver(instance());
    const approved = await signedDeliveries(secret, 20);
    const [failing] = await signedDeliveries(secret, 1, 'leave.rejected');
    for (const delivery of [...approved, failing!]) expect((await first.post(delivery)).status).toBe(202);
    await expect.poll(() => runs.size).toBe(21);
    // Graceful stop: ends although the failing event's next attempt is ten minutes away.
    await first.close();
    expect(dead.map((letter) => [letter.event.id, letter.attempts])).toEqual([[failing!.event.id, 1]]);

    const second = await serveReceiver(instance());
    try {
      const answers = await Promise.all([...approved, failing!].map((delivery) => second.post(delivery)));
      expect(new Set(answers.map((answer) => `${answer.status} ${answer.body}`))).toEqual(
        new Set(['200 {"received":true,"duplicate":true}']),
      );
    } finally {
      await second.close();
    }
    expect([...runs.values()].filter((count) => count !== 1)).toEqual([]);
  });
});
