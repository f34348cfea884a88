// Spec rule 4 across instances: three receivers on one Redis with BullMQ, ordering on; and kill -9 with a key held.

import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';
import {
  checkOrdering,
  deliverShuffled,
  leaveLifecycles,
  type RunRecord,
} from '../support/ordering-scenario.js';
import { deliverUntilAccepted, type Instance, startInstance } from './cluster.js';

const SCRIPT = fileURLToPath(new URL('./ordering-instance.ts', import.meta.url));
const secret = 'whsec_ordering_cluster';
const running: Instance[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((instance) => instance.stop('SIGKILL')));
});

type Recorded = RunRecord & { readonly instance: string };

describe.skipIf(!redisUrl)('ordering across instances (Redis store, BullMQ queue)', () => {
  it('100 leave requests, 1 000 deliveries shuffled and duplicated to 3 instances: newest state, one run per key at a time, each event run or counted stale once', {
    timeout: 180_000,
  }, async () => {
    const name = uniqueName('ordering');
    const env = { REDIS_URL: redisUrl, RUN_NAME: name, SECRET: secret };
    const instances = await Promise.all(
      ['a', 'b', 'c'].map((i) => startInstance({ ...env, INSTANCE: i }, SCRIPT)),
    );
    running.push(...instances);
    const events = leaveLifecycles(100);
    await deliverShuffled(
      events,
      instances.map((instance) => instance.url),
      secret,
    );
    const redis = connectRedis();
    const read = async () => {
      const runs = (await redis.lrange(`${name}:runs`, 0, -1)).map((line) => JSON.parse(line) as Recorded);
      const stale = new Map(
        Object.entries(await redis.hgetall(`${name}:stale`)).map(([id, n]) => [id, Number(n)] as const),
      );
      return { runs, stale };
    };
    // Every event ends run or skipped as stale.
    await expect
      .poll(
        async () => {
          const { runs, stale } = await read();
          return runs.filter((r) => r.kind === 'end').length + [...stale.values()].reduce((a, b) => a + b, 0);
        },
        { timeout: 120_000, interval: 200 },
      )
      .toBeGreaterThanOrEqual(events.length);
    const { runs, stale } = await read();
    const states = new Map(Object.entries(await redis.hgetall(`${name}:state`)));
    // Never older over newer on every record, not only in its final state: each run starts on an event newer than
    // every one run before it (no handler here fails, so each run that started was handled).
    checkOrdering(events, runs, stale, states);
    // The shuffle really brought events after newer ones: some were skipped as stale.
    expect([...stale.values()].reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    // Work was spread over the instances.
    expect(new Set(runs.map((r) => r.instance)).size).toBeGreaterThan(1);
    await redis.quit();
  });

  it('kill -9 while a key is held: another instance takes the key once its lease lapses; the watermark never moved', {
    timeout: 120_000,
  }, async () => {
    const name = uniqueName('ordering-kill');
    const env = { REDIS_URL: redisUrl, RUN_NAME: name, SECRET: secret };
    const leaveRequestId = crypto.randomUUID();
    const at = (second: number) => `2026-11-02T08:00:0${second}.000000Z`;
    const first = await createSignedDelivery({
      secret,
      type: 'leave.approved',
      occurredAt: at(1),
      data: { leaveRequestId } as never,
    });
    const second = await createSignedDelivery({
      secret,
      type: 'leave.cancelled',
      occurredAt: at(2),
      data: { leaveRequestId } as never,
    });
    const redis = connectRedis();
    const runs = async () =>
      (await redis.lrange(`${name}:runs`, 0, -1)).map((line) => JSON.parse(line) as Recorded);

    // `a` takes the key and is killed in the middle of its (long) handler.
    const a = await startInstance({ ...env, INSTANCE: 'a', HANDLER_MS: '60000' }, SCRIPT);
    running.push(a);
    await deliverUntilAccepted(first, () => a.url);
    await expect.poll(async () => (await runs()).length, { timeout: 30_000, interval: 20 }).toBe(1);
    await a.stop('SIGKILL');
    // Its handler never finished, so its event set no watermark: not at the kill, nor once its lease lapsed.
    const watermark = `${name}:dedupe:mark:{${leaveRequestId}}`;
    expect(await redis.exists(watermark)).toBe(0);
    await sleep(1500); // past a's 1 s lease
    expect(await redis.exists(watermark)).toBe(0);

    // `b` gets the newer event: it waits for the key, takes it once the lease lapses, and runs it.
    const b = await startInstance({ ...env, INSTANCE: 'b', HANDLER_MS: '10' }, SCRIPT);
    running.push(b);
    await deliverUntilAccepted(second, () => b.url);
    await expect
      .poll(async () => (await runs()).some((r) => r.kind === 'end' && r.eventId === second.event.id), {
        timeout: 60_000,
        interval: 50,
      })
      .toBe(true);
    // The killed handler never finished, so its event never moved the watermark. Its job, taken over from the dead
    // instance, races the newer event for the key once a's lease lapses, and either order keeps rule 4: taken first,
    // it runs again on `b` before the newer one; taken after, it finds itself stale and is skipped.
    const settled = async (): Promise<boolean> =>
      Number(await redis.hget(`${name}:stale`, first.event.id)) === 1 ||
      (await runs()).some((r) => r.kind === 'end' && r.eventId === first.event.id);
    await expect.poll(settled, { timeout: 60_000, interval: 50 }).toBe(true);
    const log = (await runs()).map((r) => `${r.kind}:${r.instance}:${r.state}`);
    const skipped = Number(await redis.hget(`${name}:stale`, first.event.id)) === 1;
    expect(log).toEqual(
      skipped
        ? ['start:a:approved', 'start:b:cancelled', 'end:b:cancelled']
        : ['start:a:approved', 'start:b:approved', 'end:b:approved', 'start:b:cancelled', 'end:b:cancelled'],
    );
    expect(await redis.hget(`${name}:state`, leaveRequestId)).toBe('cancelled');
    // The key read above is the watermark's: the newer event's success wrote it (so its absence after the kill meant
    // something).
    await expect.poll(() => redis.exists(watermark), { timeout: 30_000, interval: 50 }).toBe(1);
    await redis.quit();
  });
});
