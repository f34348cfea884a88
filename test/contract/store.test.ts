// The store contract on the memory store (injected clock) and on the Redis store (a real redis-server).
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { ConfigurationError, createMemoryStore } from 'workforce-webhooks';
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

describe('memory store bounds', () => {
  it('forgets the id marked done longest ago once past max, never a claim in flight', async () => {
    const store = createMemoryStore({ max: 3 });
    const claims = new Map<string, string>();
    for (const id of ['a', 'b', 'c', 'd']) {
      const claim = await store.claim(id, 30_000);
      if (claim.status === 'claimed') claims.set(id, claim.token);
    }
    for (const id of ['a', 'b', 'c'])
      expect(await store.complete(id, claims.get(id) ?? '', 60_000)).toBe(true);
    const e = await store.claim('e', 30_000);
    expect(e.status === 'claimed' && (await store.complete('e', e.token, 60_000))).toBe(true);
    // Four done ids past a max of three: the first marked done ('a') is forgotten; 'd', still in flight, is not.
    expect((await store.claim('b', 30_000)).status).toBe('done');
    expect((await store.claim('d', 30_000)).status).toBe('in_progress');
    expect((await store.claim('a', 30_000)).status).toBe('claimed');
    // 'a' was taken again: its old token no longer acts.
    expect(await store.complete('a', claims.get('a') ?? '', 60_000)).toBe(false);
  });

  it('holds a lease and a done mark up to and including their last millisecond', async () => {
    let clock = 5_000;
    const store = createMemoryStore({ now: () => clock });
    const claim = await store.claim('lease', 100);
    clock += 100;
    expect((await store.claim('lease', 100)).status).toBe('in_progress');
    clock += 1;
    expect((await store.claim('lease', 100)).status).toBe('claimed');
    expect(claim.status === 'claimed' && (await store.complete('lease', claim.token, 100))).toBe(false);

    const owner = await store.claim('done', 100);
    expect(owner.status === 'claimed' && (await store.complete('done', owner.token, 50))).toBe(true);
    clock += 50;
    expect((await store.claim('done', 100)).status).toBe('done');
    clock += 1;
    expect((await store.claim('done', 100)).status).toBe('claimed');
  });

  it("renews the owner's lease after it passed when nobody took the id, and not once it was taken", async () => {
    let clock = 10_000;
    const store = createMemoryStore({ now: () => clock });
    const claim = await store.claim('slow', 300);
    if (claim.status !== 'claimed') throw new Error('expected a claim');
    clock += 600; // a synchronous section twice the lease
    expect(await store.renew('slow', claim.token, 300)).toBe(true);
    expect((await store.claim('slow', 300)).status).toBe('in_progress');
    expect(await store.complete('slow', claim.token, 60_000)).toBe(true);
    expect((await store.claim('slow', 300)).status).toBe('done');

    const lost = await store.claim('taken', 300);
    if (lost.status !== 'claimed') throw new Error('expected a claim');
    clock += 600;
    const taker = await store.claim('taken', 300);
    expect(taker.status).toBe('claimed');
    expect(await store.renew('taken', lost.token, 300)).toBe(false);
    // Released, then renewed by its old owner: taken back, as Redis does (nobody held it).
    if (taker.status !== 'claimed') throw new Error('expected a claim');
    expect(await store.release('taken', taker.token)).toBe(true);
    expect(await store.renew('taken', taker.token, 300)).toBe(true);
    expect((await store.claim('taken', 300)).status).toBe('in_progress');
  });

  it('stays within max over many done ids, and refuses a max no Map can hold', async () => {
    const store = createMemoryStore({ max: 1000 });
    for (let i = 0; i < 10_000; i++) {
      const claim = await store.claim(`id-${i}`, 30_000);
      if (claim.status === 'claimed') await store.complete(`id-${i}`, claim.token, 60_000);
    }
    // The last 1000 marked done are remembered, the 1001st from the end is not.
    expect((await store.claim('id-9000', 30_000)).status).toBe('done');
    expect((await store.claim('id-8999', 30_000)).status).toBe('claimed');
    expect(() => createMemoryStore({ max: 2 ** 24 + 1 })).toThrow(ConfigurationError);
    expect(() => createMemoryStore({ max: 0 })).toThrow(ConfigurationError);
  });
});

describe.skipIf(!redisUrl)('with redis-server', () => {
  runStoreContract('redis', async () => ({
    store: createRedisStore({ client: connectRedis(), prefix: `${uniqueName('store')}:` }),
    // Redis keeps its own time: let it pass for real (milliseconds, with a margin for PX precision).
    elapse: (ms) => sleep(ms + 20),
  }));
});
