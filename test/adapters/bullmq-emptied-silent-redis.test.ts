// The BullMQ queue's watch for an emptied Redis, while Redis is silent (stopped, its connection still open and
// `ready`): its looks do not pile up in the connection, one a tick, until Redis answers again.
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { watchForEmptyRedis } from '../../adapters/bullmq-emptied.js';
import { hasRedisServer, startRedisServer } from '../setup/redis-server.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe.skipIf(!hasRedisServer())('watchForEmptyRedis on a silent Redis', () => {
  it('keeps at most one look waiting for Redis, however many intervals pass before it answers', {
    timeout: 60_000,
  }, async () => {
    const server = await startRedisServer();
    cleanups.push(() => server.dispose());
    const client = new Redis(server.url, { maxRetriesPerRequest: null });
    cleanups.push(() => client.disconnect());
    const key = 'bull:silent:workforce-webhooks:since';
    let emptied = 0;
    const stop = watchForEmptyRedis(client, key, 20, () => {
      emptied++;
    });
    cleanups.push(stop);
    // The first look answered: from now on each interval looks.
    await expect.poll(() => client.exists(key), { timeout: 10_000 }).toBe(1);

    server.pause();
    cleanups.push(() => server.resume());
    // Many intervals while Redis is silent (the connection stays `ready`: nothing tells the client).
    await sleep(1000);
    expect(client.status).toBe('ready');
    expect(client.commandQueue.length).toBeLessThanOrEqual(1);

    // Redis answers again: the look that waited lands, and finds the key still there.
    server.resume();
    await expect.poll(() => client.commandQueue.length, { timeout: 10_000 }).toBe(0);
    expect(await client.exists(key)).toBe(1);
    expect(emptied).toBe(0);
  });
});
