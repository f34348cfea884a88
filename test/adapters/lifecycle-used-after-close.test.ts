// A receiver used after close() (a test's afterEach that closed it, a handle kept by an admin route): every call
// answers at once, a delivery 503 shutting_down with Retry-After, an admin call the queue's answer, never a hang.
import { describe, expect, it } from 'vitest';
import {
  createMemoryQueue,
  createReceiver,
  type EventQueue,
  type Receiver,
  silentLogger,
  WebhookError,
} from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createRedisStore } from 'workforce-webhooks/redis';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';

const secret = 'whsec_lifecycle_used_after_close';

// Settles `call` within a wide bound, or says it hung.
const settle = async <T>(call: () => Promise<T>): Promise<{ value: T } | { error: unknown } | 'hung'> => {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const outcome = await Promise.race([
    call().then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    ),
    new Promise<'hung'>((resolve) => {
      timer = setTimeout(resolve, 15_000, 'hung');
    }),
  ]);
  clearTimeout(timer);
  return outcome;
};

const codeOf = (outcome: { value: unknown } | { error: unknown } | 'hung'): string =>
  outcome === 'hung'
    ? 'hung'
    : 'error' in outcome
      ? outcome.error instanceof WebhookError
        ? outcome.error.code
        : String(outcome.error)
      : 'answered';

describe.skipIf(!redisUrl)('a receiver used after close()', () => {
  it.each(['memory', 'bullmq'] as const)(
    '%s queue: every call answers at once',
    { timeout: 120_000 },
    async (kind) => {
      const name = uniqueName('after-close');
      const receiver: Receiver = createReceiver({
        secret,
        logger: silentLogger,
        store: createRedisStore({ client: connectRedis(), prefix: `${name}:store:` }),
        queue: (kind === 'bullmq'
          ? createBullmqQueue({ connection: connectRedis(), name })
          : createMemoryQueue()) as EventQueue,
      }).on('leave.approved', () => {});
      await receiver.close({ timeoutMs: 5000 });
      const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });

      const handled = await receiver.handle({
        method: 'POST',
        headers: delivery.headers,
        body: delivery.body,
      });
      expect([handled.status, JSON.parse(handled.body)]).toEqual([503, { error: 'shutting_down' }]);
      expect(handled.headers['retry-after']).toMatch(/^\d+$/);
      const fetched = await receiver.fetch(
        new Request('http://localhost/webhooks', {
          method: 'POST',
          headers: delivery.headers,
          body: delivery.body,
        }),
      );
      expect(fetched.status).toBe(503);
      expect(fetched.headers.get('retry-after')).toMatch(/^\d+$/);

      // The memory queue's letters can still be read and discarded; BullMQ's connections are gone: shutting_down.
      const read = kind === 'memory' ? 'answered' : 'shutting_down';
      expect({
        deadLetters: codeOf(await settle(() => receiver.deadLetters())),
        replay: codeOf(await settle(() => receiver.replay(delivery.event.id))),
        discardDeadLetters: codeOf(await settle(() => receiver.discardDeadLetters())),
        replayDeadLetters: codeOf(await settle(() => receiver.replayDeadLetters())),
        close: codeOf(await settle(() => receiver.close())),
      }).toEqual({
        deadLetters: read,
        // No such letter on the memory queue: answered false.
        replay: read,
        discardDeadLetters: read,
        replayDeadLetters: read,
        close: 'answered',
      });
    },
  );
});
