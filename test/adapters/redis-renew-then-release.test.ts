// The Redis store used on its own: a release sent after a renewal wins, even when Redis lost its script cache and
// the renewal is re-sent (NOSCRIPT, then EVAL) behind the release.
import { describe, expect, it } from 'vitest';
import { createRedisStore } from 'workforce-webhooks/redis';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';

const claimed = (claim: { status: string; token?: string }): string => {
  if (claim.status !== 'claimed' || claim.token === undefined)
    throw new Error(`expected a claim, got ${claim.status}`);
  return claim.token;
};

describe.skipIf(!redisUrl)('Redis store: a release sent while a renewal is in flight', () => {
  it('leaves the id released when the renewal is re-sent after a script-cache loss', async () => {
    const client = connectRedis();
    const prefix = `${uniqueName('renew-release')}:`;
    const store = createRedisStore({ client, prefix });
    const id = crypto.randomUUID();
    const token = claimed(await store.claim(id, 30_000));
    // Redis restarted or failed over (its script cache is empty), then another instance's release reloaded that
    // script: the renewal's script is the only one still missing.
    await client.script('FLUSH');
    const other = crypto.randomUUID();
    expect(await store.release(other, claimed(await store.claim(other, 30_000)))).toBe(true);

    // A renewal timer fires, then the run fails and its claim is released before the renewal has answered.
    const renewal = store.renew(id, token, 30_000);
    const released = store.release(id, token);
    expect(await released).toBe(true);
    await renewal;

    // Released is released: the sender's retry takes the id at once instead of 409 for a whole lease.
    expect(await client.exists(`${prefix}${id}`)).toBe(0);
    expect((await store.claim(id, 30_000)).status).toBe('claimed');
  });

  it('still re-takes a lapsed lease on its own renewal after a script-cache loss', async () => {
    const client = connectRedis();
    const prefix = `${uniqueName('renew-lapsed')}:`;
    const store = createRedisStore({ client, prefix });
    const id = crypto.randomUUID();
    const token = claimed(await store.claim(id, 30_000));
    // The lease lapsed (the key expired) and nobody took the id; Redis lost its scripts meanwhile.
    await client.del(`${prefix}${id}`);
    await client.script('FLUSH');
    expect(await store.renew(id, token, 30_000)).toBe(true);
    expect(await client.get(`${prefix}${id}`)).toBe(token);
    expect(await store.release(id, token)).toBe(true);
    expect(await client.exists(`${prefix}${id}`)).toBe(0);
  });
});
