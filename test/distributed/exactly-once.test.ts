// Three receiver processes on one Redis: 1 000 events, each delivered three times at once to different instances.
import { afterEach, describe, expect, it } from 'vitest';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';
import { deliverCopies, expectOneAcceptedCopy, type Instance, startInstance } from './cluster.js';

const secret = 'whsec_several_instances';
const EVENTS = 1000;
const running: Instance[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((instance) => instance.stop('SIGKILL')));
});

describe.skipIf(!redisUrl)('several instances sharing one Redis', () => {
  for (const queue of ['memory', 'bullmq'] as const) {
    it(`runs every handler exactly once per event (Redis store, ${queue} queue)`, {
      timeout: 120_000,
    }, async () => {
      const name = uniqueName(`exactly-once-${queue}`);
      const env = { REDIS_URL: redisUrl, RUN_NAME: name, SECRET: secret, QUEUE: queue };
      const instances = await Promise.all(
        ['a', 'b', 'c'].map((instance) => startInstance({ ...env, INSTANCE: instance })),
      );
      running.push(...instances);

      // Each event three times, concurrently, each copy starting on a different instance.
      const ids = Array.from({ length: EVENTS }, () => crypto.randomUUID());
      const results = await deliverCopies(ids, instances, { secret, limit: 96 });
      // Exactly one copy of each event was accepted (202); the others were told it is a duplicate (200).
      expectOneAcceptedCopy(results, ids);

      const redis = connectRedis();
      await expect.poll(() => redis.hlen(`${name}:runs:typed`), { timeout: 60_000 }).toBe(EVENTS);
      await expect.poll(() => redis.hlen(`${name}:runs:any`), { timeout: 60_000 }).toBe(EVENTS);
      // Stop gracefully (drain), so no late run can come after the count.
      await Promise.all(running.splice(0).map((instance) => instance.stop('SIGTERM')));
      for (const handler of ['typed', 'any']) {
        const runs = await redis.hgetall(`${name}:runs:${handler}`);
        expect(Object.keys(runs).sort()).toEqual([...ids].sort());
        expect(Object.values(runs).filter((count) => count !== '1')).toEqual([]);
      }
      // The work really was spread over the processes.
      const log = await redis.lrange(`${name}:log`, 0, -1);
      const workers = new Set(
        log.filter((line) => line.startsWith('done:')).map((line) => line.split(':')[1]),
      );
      expect(workers.size).toBeGreaterThan(1);
    });
  }
});
