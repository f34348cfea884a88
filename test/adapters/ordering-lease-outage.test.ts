// Ordering on Redis out of memory (noeviction) for many leases: Redis refuses a watermark write, but the steps that
// keep a key its run already has (renewals, a failing event's hold, its retry taking the hold back) still land, so no
// other event of the record takes the key meanwhile, on this instance or another.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createMemoryQueue, createReceiver } from 'workforce-webhooks';
import { createRedisStore } from 'workforce-webhooks/redis';
import { markOf } from '../../src/ordering-mark.js';
import { connectRedis, redisUrl } from '../setup/redis-helpers.js';
import { hasRedisServer, startRedisServer } from '../setup/redis-server.js';
import { recordingLogger } from '../support/logger.js';
import { signedLeave, until } from '../support/ordering-scenario.js';

const secret = 'whsec_ordering_lease_outage';
const leaseMs = 300;

describe.skipIf(!redisUrl || !hasRedisServer())('Redis out of memory for many leases', () => {
  it("keeps the key with the newer event's instance while its watermark write is refused: the older event on another instance is skipped", {
    timeout: 30_000,
  }, async () => {
    const server = await startRedisServer();
    onTestFinished(() => server.dispose());
    const admin = connectRedis(server.url);
    const logger = recordingLogger();
    const stale: string[] = [];
    const ran: string[] = [];
    let releaseNewer!: () => void;
    const newerRunning = new Promise<void>((resolve) => {
      releaseNewer = resolve;
    });
    const instance = () => {
      const receiver = createReceiver({
        secret,
        store: createRedisStore({ client: connectRedis(server.url) }),
        queue: createMemoryQueue({ backoff: () => 1, attempts: 3 }),
        logger,
        leaseMs,
        ordering: {},
        onStale: (event) => void stale.push(event.type),
      });
      onTestFinished(() => receiver.close({ timeoutMs: 1000 }));
      receiver.on('leave.*', async (event) => {
        ran.push(event.type);
        if (event.type !== 'leave.cancelled') return;
        await newerRunning;
        // Redis fills up just as the newer event's handlers end.
        await admin.config('SET', 'maxmemory', '1');
      });
      return receiver;
    };
    const [first, second] = [instance(), instance()];
    const key = crypto.randomUUID();
    const newer = await signedLeave(secret, 'leave.cancelled', 2, key);
    expect((await first.handle(newer)).status).toBe(202);
    await until(() => ran.length === 1, 'the newer event');
    // The older event, on the other instance, waits for the key.
    expect((await second.handle(await signedLeave(secret, 'leave.approved', 1, key))).status).toBe(202);
    releaseNewer();
    await until(
      () => logger.lines.some((line) => line.msg === 'workforce-webhooks: could not give up an ordering key'),
      'the refused write',
    );
    // Many leases out of memory: a lease not renewed would have lapsed, and the other instance taken the key.
    await sleep(leaseMs * 6);
    expect(ran).toEqual(['leave.cancelled']);
    await admin.config('SET', 'maxmemory', '0');
    await until(() => stale.length === 1, 'the older event to be skipped');
    expect(ran).toEqual(['leave.cancelled']);
    expect(stale).toEqual(['leave.approved']);
    expect(await createRedisStore({ client: admin }).ordering!.watermark(key)).toBe(markOf(newer.event));
  });

  it('keeps a failing event holding its key out of memory: its retry takes the key back and runs before the newer event', {
    timeout: 30_000,
  }, async () => {
    const server = await startRedisServer();
    onTestFinished(() => server.dispose());
    const admin = connectRedis(server.url);
    const receiver = createReceiver({
      secret,
      store: createRedisStore({ client: connectRedis(server.url) }),
      queue: createMemoryQueue({ backoff: () => leaseMs * 2, attempts: 3 }),
      logger: recordingLogger(),
      leaseMs,
      ordering: {},
    });
    onTestFinished(() => receiver.close({ timeoutMs: 1000 }));
    let releaseOlder!: () => void;
    const olderRunning = new Promise<void>((resolve) => {
      releaseOlder = resolve;
    });
    const ran: string[] = [];
    receiver.on('leave.*', async (event, ctx) => {
      ran.push(`${event.type}#${ctx.attempt}`);
      if (event.type !== 'leave.approved' || ctx.attempt !== 1) return;
      await olderRunning;
      // Redis fills up just as the older event's first attempt fails.
      await admin.config('SET', 'maxmemory', '1');
      throw new Error('the calendar is down');
    });
    const key = crypto.randomUUID();
    expect((await receiver.handle(await signedLeave(secret, 'leave.approved', 1, key))).status).toBe(202);
    await until(() => ran.length === 1, 'the older event');
    expect((await receiver.handle(await signedLeave(secret, 'leave.cancelled', 2, key))).status).toBe(202);
    releaseOlder();
    await until(() => ran.length === 2, "the older event's retry");
    // Many leases out of memory: the newer event waits behind the older one, whose watermark write is refused.
    await sleep(leaseMs * 6);
    expect(ran).toEqual(['leave.approved#1', 'leave.approved#2']);
    await admin.config('SET', 'maxmemory', '0');
    await until(() => ran.length === 3, 'the newer event');
    expect(ran).toEqual(['leave.approved#1', 'leave.approved#2', 'leave.cancelled#1']);
  });
});
