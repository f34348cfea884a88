// A dead-letter read or bulk call given what its types forbid (from JavaScript): a ConfigurationError on every queue.
import { createPostgresBackend } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ConfigurationError,
  createMemoryQueue,
  discardDeadLetters,
  type EventQueue,
  replayDeadLetters,
} from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { postgresUrl } from '../setup/postgres-helpers.js';
import { redisUrl, uniqueName } from '../setup/redis-helpers.js';

const open: EventQueue[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((queue) => queue.close({ timeoutMs: 3000 })));
});

const queues: Array<[string, boolean, () => EventQueue]> = [
  ['memory', false, () => createMemoryQueue()],
  [
    'BullMQ on Redis',
    !redisUrl,
    () => createBullmqQueue({ connection: redisUrl, name: uniqueName('cursor') }),
  ],
  [
    'BullMQ on Postgres',
    !postgresUrl,
    () =>
      createBullmqQueue({
        backend: createPostgresBackend,
        connection: { connectionString: postgresUrl, migrate: true, max: 2 },
        name: uniqueName('cursor'),
      }),
  ],
];

describe.each(queues)('%s: dead-letter calls given what their types forbid', (_label, skip, make) => {
  it.skipIf(skip)(
    'refuses it with a ConfigurationError, as a malformed one',
    { timeout: 30_000 },
    async () => {
      const queue = make();
      open.push(queue);
      for (const cursor of [5, {}, null])
        await expect(queue.deadLetters({ cursor: cursor as never })).rejects.toBeInstanceOf(
          ConfigurationError,
        );
      await expect(queue.deadLetters({ cursor: 'not-a-cursor' })).rejects.toBeInstanceOf(ConfigurationError);
    },
  );

  it.skipIf(skip)(
    'refuses a query or a filter that is not an object with a ConfigurationError',
    {
      timeout: 30_000,
    },
    async () => {
      const queue = make();
      open.push(queue);
      for (const query of [null, 'leave.*', 5]) {
        await expect(queue.deadLetters(query as never)).rejects.toBeInstanceOf(ConfigurationError);
        await expect(replayDeadLetters(queue, query as never)).rejects.toBeInstanceOf(ConfigurationError);
        await expect(discardDeadLetters(queue, query as never)).rejects.toBeInstanceOf(ConfigurationError);
      }
    },
  );
});
