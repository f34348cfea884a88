// Once close() resolved the app closes its store client: ordering touches the store no more. A handler that outlives
// the close renews and gives up nothing (its lease lapses to another instance), and a refused watermark write stops.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, onTestFinished } from 'vitest';
import { byDefaultKeys, createMemoryQueue, createReceiver, type Receiver } from 'workforce-webhooks';
import { createRedisStore } from 'workforce-webhooks/redis';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';
import { recordingLogger } from '../support/logger.js';
import { signedLeave, until } from '../support/ordering-scenario.js';
import { refusingOrderingStore } from '../support/refusing-ordering-store.js';

const secret = 'whsec_loose_ordering_outlives_close';
const leaseMs = 300;

describe.skipIf(!redisUrl)(
  'ordering: a handler that outlives close(), its store client closed after it',
  () => {
    it('renews nothing and gives nothing up through the closed client, logs nothing, and its lease lapses to the next instance', {
      timeout: 60_000,
    }, async () => {
      const prefix = `${uniqueName('outlives-close')}:`;
      const key = crypto.randomUUID();
      const logger = recordingLogger();
      const client = connectRedis();
      let started = false;
      let ended = false;
      let letGo: (() => void) | undefined;
      const held = new Promise<void>((resolve) => {
        letGo = resolve;
      });
      const first = createReceiver({
        secret,
        logger,
        leaseMs,
        store: createRedisStore({ client, prefix, leaseMs, logger }),
        ordering: { key: byDefaultKeys(), maxWaitMs: 60_000 },
      }).on('leave.requested', async () => {
        started = true;
        // Never looks at ctx.signal: it runs on past the close.
        await held;
        ended = true;
      });
      const requested = await signedLeave(secret, 'leave.requested', 1, key);
      expect((await first.handle(requested)).status).toBe(202);
      await until(() => started, 'the handler to start');

      await first.close({ timeoutMs: 500 });
      const afterClose = logger.lines.length;
      // As an app does once close() resolved: its store client goes.
      await client.quit();
      // Many renewal periods (a third of a lease each) with the handler still running, then it ends.
      await sleep(leaseMs * 5);
      letGo!();
      await until(() => ended, 'the handler to end');
      await sleep(leaseMs);

      const late = logger.lines
        .slice(afterClose)
        .filter((line) => line.level === 'warn' || line.level === 'error');
      expect(late.map((line) => line.msg)).toEqual([]);

      // The key was left to lapse: another instance on the same Redis takes it and runs a newer event of the record.
      const ran: string[] = [];
      const second: Receiver = createReceiver({
        secret,
        logger: recordingLogger(),
        leaseMs,
        store: createRedisStore({ client: connectRedis(), prefix, leaseMs, logger: recordingLogger() }),
        ordering: { key: byDefaultKeys(), maxWaitMs: 60_000 },
      }).on('leave.approved', (event) => {
        ran.push(event.id);
      });
      onTestFinished(() => second.close({ timeoutMs: 5000 }));
      const approved = await signedLeave(secret, 'leave.approved', 2, key);
      expect((await second.handle(approved)).status).toBe(202);
      await until(() => ran.length === 1, 'the newer event to run on the next instance', 30_000);
      expect(ran).toEqual([approved.event.id]);
    });
  },
);

describe('ordering: a watermark write still refused when close() gives up on it', () => {
  it('is not tried again after close() resolved, and nothing more is logged', {
    timeout: 30_000,
  }, async () => {
    const { store, state } = refusingOrderingStore();
    const logger = recordingLogger();
    // Retries a third of a lease apart at most, given up after maxWaitMs: both well inside the wait below.
    const receiver = createReceiver({
      secret,
      store,
      logger,
      leaseMs: 300,
      queue: createMemoryQueue(),
      ordering: { maxWaitMs: 1000 },
    }).on('leave.approved', () => {
      state.refusing = true;
    });
    const delivery = await signedLeave(secret, 'leave.approved', 1, crypto.randomUUID());
    expect((await receiver.handle(delivery)).status).toBe(202);
    await until(() => state.refused >= 1, 'a refused watermark write');

    await receiver.close({ timeoutMs: 300 });
    const refusedAtClose = state.refused;
    const afterClose = logger.lines.length;
    // Past maxWaitMs, with many retry periods in it.
    await sleep(2000);

    expect(state.refused).toBe(refusedAtClose);
    expect(logger.lines.slice(afterClose).map((line) => line.msg)).toEqual([]);
  });
});
