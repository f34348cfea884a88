// 20 000 BullMQ dead letters: all kept in Redis, and reading one page costs Redis work bounded by the page, not by them.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HandlerFailure, MAX_DEAD_LETTER_LIMIT, silentLogger } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { queuedEvent } from '../contract/queue-suite.js';
import { redisUrl } from '../setup/redis-helpers.js';
import { hasRedisServer, type RedisServer, startRedisServer } from '../setup/redis-server.js';

const LETTERS = 20_000;

// Calls per command since the last CONFIG RESETSTAT, from INFO commandstats.
async function commandCalls(client: Redis): Promise<Record<string, number>> {
  const info = await client.info('commandstats');
  const calls: Record<string, number> = {};
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls[match[1]!] = Number(match[2]);
  return calls;
}

describe.skipIf(!redisUrl || !hasRedisServer())('BullMQ dead letters at scale', () => {
  // A server of this test's own, so that its command counts are this queue's alone.
  let redis: RedisServer;
  let admin: Redis;
  beforeAll(async () => {
    redis = await startRedisServer();
    admin = new Redis(redis.url);
  });
  afterAll(async () => {
    await admin?.quit();
    await redis?.dispose();
  });

  it('keeps every one, and reads a page with Redis work bounded by its size', {
    timeout: 300_000,
  }, async () => {
    const queue = createBullmqQueue({
      connection: redis.url,
      name: 'many-dead',
      attempts: 1,
      concurrency: 200,
    });
    let dead = 0;
    queue.start({
      logger: silentLogger,
      process: async () => {
        throw new HandlerFailure([new Error('down')], []);
      },
      onDeadLetter: async () => {
        dead++;
      },
    });
    try {
      for (let sent = 0; sent < LETTERS; sent += 1000)
        await Promise.all(Array.from({ length: 1000 }, () => queue.enqueue(queuedEvent())));
      await expect
        .poll(() => admin.zcard('bull:many-dead:failed'), { timeout: 240_000, interval: 500 })
        .toBe(LETTERS);
      await expect.poll(() => dead).toBe(LETTERS);

      for (const limit of [undefined, MAX_DEAD_LETTER_LIMIT, 5000]) {
        await admin.config('RESETSTAT');
        const page = await queue.deadLetters(limit === undefined ? {} : { limit });
        const calls = await commandCalls(admin);
        const total = Object.values(calls).reduce((sum, n) => sum + n, 0);
        const size = Math.min(limit ?? 100, MAX_DEAD_LETTER_LIMIT);
        console.log(
          `deadLetters({ limit: ${limit} }) over ${LETTERS}: ${page.items.length} items, ${total} Redis commands`,
          calls,
        );
        expect(page.items).toHaveLength(size);
        // One read of the ids, one of each job, and a little for the worker idling meanwhile: never one per dead letter.
        expect(total).toBeLessThan(size * 2 + 100);
      }

      // A type no letter has: the read still looks at a bounded number of them, and says where to go on.
      await admin.config('RESETSTAT');
      const none = await queue.deadLetters({ type: 'nothing.*' });
      const looked = (await commandCalls(admin)).hgetall ?? 0;
      expect(none.items).toEqual([]);
      expect(typeof none.cursor).toBe('string');
      expect(looked).toBeLessThanOrEqual(1000);

      // Every page together is every dead letter, newest first, none twice, all still in Redis.
      const seen = new Set<string>();
      let last = Number.POSITIVE_INFINITY;
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await queue.deadLetters({ limit: MAX_DEAD_LETTER_LIMIT, cursor });
        pages++;
        for (const letter of page.items) {
          expect(letter.failedAt).toBeLessThanOrEqual(last);
          last = letter.failedAt;
          seen.add(letter.event.id);
        }
        cursor = page.cursor;
      } while (cursor !== undefined);
      expect(pages).toBe(LETTERS / MAX_DEAD_LETTER_LIMIT);
      expect(seen.size).toBe(LETTERS);
      expect(await admin.zcard('bull:many-dead:failed')).toBe(LETTERS);
    } finally {
      await queue.close({ timeoutMs: 2000 });
    }
  });
});
