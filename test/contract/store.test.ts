// The store contract on the memory store (injected clock) and on the Redis store (a real redis-server).
import { setTimeout as sleep } from 'node:timers/promises';
import { describe } from 'vitest';
import { createMemoryStore } from 'workforce-webhooks';
import { createRedisStore } from 'workforce-webhooks/redis';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';
import { runStoreContract } from './store-suite.js';

runStoreContract('memory', async () => {
  let clock = 1_000_000;
  return {
    store: createMemoryStore({ now: () => clock }),
    elapse: async (ms) => {
      clock += ms;
    },
  };
});

describe.skipIf(!redisUrl)('with redis-server', () => {
  runStoreContract('redis', async () => ({
    store: createRedisStore({ client: connectRedis(), prefix: `${uniqueName('store')}:` }),
    // Redis keeps its own time: let it pass for real (milliseconds, with a margin for PX precision).
    elapse: (ms) => sleep(ms + 20),
  }));
});
