// The queue contract on the memory queue and on the BullMQ queue (a real redis-server).
import { describe } from 'vitest';
import { createMemoryQueue } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';
import { runQueueContract } from './queue-suite.js';

runQueueContract('memory', (options) => createMemoryQueue(options));

describe.skipIf(!redisUrl)('with redis-server', () => {
  runQueueContract('bullmq', (options) =>
    createBullmqQueue({
      connection: connectRedis(),
      name: uniqueName('queue'),
      // A short stall check, so a lost lock shows up within a test rather than in 30 s.
      lockDurationMs: 5000,
      stalledIntervalMs: 5000,
      ...options,
    }),
  );
});
