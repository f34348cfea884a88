// Ordering on the Redis store when Redis refuses the watermark write (out of memory under noeviction) just as the
// newer event's handlers end: the write is tried again until it lands, so an older event of the record that comes
// later is skipped as stale instead of running over the newer one. `leaseMs` is short so the lease would lapse.
import { afterEach, describe, expect, it } from 'vitest';
import { createReceiver } from 'workforce-webhooks';
import { createRedisStore } from 'workforce-webhooks/redis';
import { createSignedDelivery, sampleEventData } from 'workforce-webhooks/testing';
import { markOf } from '../../src/ordering-mark.js';
import { connectRedis, redisUrl } from '../setup/redis-helpers.js';
import { hasRedisServer, startRedisServer } from '../setup/redis-server.js';
import { recordingLogger } from '../support/logger.js';
import { until } from '../support/ordering-scenario.js';

const secret = 'whsec_ordering_leave_retry';
const encoder = new TextEncoder();
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe.skipIf(!redisUrl || !hasRedisServer())('a watermark write Redis refuses', () => {
  it('is written once Redis takes writes again: an older event of the record arriving later is skipped as stale', {
    timeout: 30_000,
  }, async () => {
    const server = await startRedisServer();
    cleanups.push(() => server.dispose());
    const client = connectRedis(server.url);
    const admin = connectRedis(server.url);
    const store = createRedisStore({ client });
    const logger = recordingLogger();
    const stale: string[] = [];
    const receiver = createReceiver({
      secret,
      store,
      logger,
      ordering: {},
      leaseMs: 1500,
      onStale: (event) => void stale.push(event.id),
    });
    cleanups.push(() => receiver.close({ timeoutMs: 1000 }));
    const leaveRequestId = crypto.randomUUID();
    const data = { ...sampleEventData('leave.approved'), leaveRequestId };
    const signed = (occurredAt: string) =>
      createSignedDelivery({ secret, type: 'leave.approved', data, occurredAt });
    const newer = await signed('2026-11-20T10:00:00.000Z');
    const older = await signed('2026-11-20T09:00:00.000Z');
    const ran: string[] = [];
    receiver.on('leave.approved', async (event) => {
      ran.push(event.occurredAt);
      // Redis fills up just as the newer event's handlers end: the watermark write that follows is refused.
      if (event.id === newer.event.id) await admin.config('SET', 'maxmemory', '1');
    });
    const post = (delivery: typeof newer) =>
      receiver.handle({ method: 'POST', headers: delivery.headers, body: encoder.encode(delivery.body) });
    expect((await post(newer)).status).toBe(202);
    await until(
      () => logger.lines.some((line) => line.msg === 'workforce-webhooks: could not give up an ordering key'),
      'the refused write',
    );
    // Room again.
    await admin.config('SET', 'maxmemory', '0');
    let watermark: string | undefined;
    for (const end = Date.now() + 10_000; watermark === undefined && Date.now() < end; ) {
      watermark = await store.ordering!.watermark(leaveRequestId);
      if (watermark === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(watermark).toBe(markOf(newer.event));
    // The older event arrives (a retry the service made): it must not run over the newer one.
    const answer = await post(older);
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ received: true, stale: true });
    await receiver.close({ timeoutMs: 5000 });
    expect(ran).toEqual([newer.event.occurredAt]);
    expect(stale).toEqual([older.event.id]);
  });
});
