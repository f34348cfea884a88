// Spec rule 4 when something around it misbehaves: a slow or failing onStale, a key function that throws, a store
// that refuses the watermark write. Memory store and queue, through `handle`.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createMemoryQueue, createReceiver, type DeadLetter, type ReceiverOptions } from 'workforce-webhooks';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { markOf } from '../../src/ordering-mark.js';
import { recordingLogger } from '../support/logger.js';
import { signedLeave, until } from '../support/ordering-scenario.js';
import { refusingOrderingStore } from '../support/refusing-ordering-store.js';

const secret = 'whsec_ordering_faults';
const encoder = new TextEncoder();

const leave = (type: string, second: number, key: string) => signedLeave(secret, type, second, key);

const make = (options: Partial<ReceiverOptions> = {}) =>
  createReceiver({
    secret,
    queue: createMemoryQueue({ backoff: () => 1, attempts: 3 }),
    ordering: {},
    logger: false,
    ...options,
  });

describe('a stale event skipped at run time', () => {
  it('is skipped once, not retried nor dead-lettered, when onStale takes longer than the time limit', async () => {
    let staleCalls = 0;
    const receiver = make({
      queue: createMemoryQueue({ attempts: 3, backoff: () => 1, handlerTimeoutMs: 40 }),
      // An audit call that never settles: longer than any attempt's time limit.
      onStale: () => {
        staleCalls++;
        return new Promise(() => {});
      },
    });
    let releaseNewer!: () => void;
    const newerRunning = new Promise<void>((resolve) => {
      releaseNewer = resolve;
    });
    const ran: string[] = [];
    receiver.on('leave.*', async (event) => {
      ran.push(event.type);
      if (event.type === 'leave.cancelled') await newerRunning;
    });
    const key = crypto.randomUUID();
    expect((await receiver.handle(await leave('leave.cancelled', 2, key))).status).toBe(202);
    await until(() => ran.length === 1, 'the newer event');
    // Accepted while the newer event holds the key: it waits, and is found stale when it gets the key.
    expect((await receiver.handle(await leave('leave.approved', 1, key))).status).toBe(202);
    releaseNewer();
    await until(() => staleCalls === 1, 'the stale report');
    // Time for a retry to show, were the skip an attempt that timed out (3 attempts of 40 ms).
    await sleep(300);
    expect(ran).toEqual(['leave.cancelled']);
    expect(staleCalls).toBe(1);
    expect((await receiver.deadLetters()).items).toHaveLength(0);
    await receiver.close({ timeoutMs: 100 });
  });

  it('is skipped once when onStale rejects or throws, the failure logged', async () => {
    for (const fails of [
      () => Promise.reject(new Error('audit down')),
      () => {
        throw new Error('audit down');
      },
    ]) {
      const logger = recordingLogger();
      let staleCalls = 0;
      const receiver = make({
        logger,
        onStale: () => {
          staleCalls++;
          return fails();
        },
      });
      let releaseNewer!: () => void;
      const newerRunning = new Promise<void>((resolve) => {
        releaseNewer = resolve;
      });
      const ran: string[] = [];
      receiver.on('leave.*', async (event) => {
        ran.push(event.type);
        if (event.type === 'leave.cancelled') await newerRunning;
      });
      const key = crypto.randomUUID();
      await receiver.handle(await leave('leave.cancelled', 2, key));
      await until(() => ran.length === 1, 'the newer event');
      await receiver.handle(await leave('leave.approved', 1, key));
      releaseNewer();
      await until(
        () => logger.lines.some((line) => line.msg === 'workforce-webhooks: onStale threw'),
        'the logged failure',
      );
      await receiver.close();
      expect({ ran, staleCalls }).toEqual({ ran: ['leave.cancelled'], staleCalls: 1 });
      expect((await receiver.deadLetters()).items).toHaveLength(0);
    }
  });

  it('is logged with its type only in the spec shape: no body text of the type reaches the log', async () => {
    const logger = recordingLogger();
    const receiver = make({ logger });
    receiver.on('leave.*', () => {});
    const leaveRequestId = crypto.randomUUID();
    // A type that `leave.*` matches but without the spec's shape: its text is the body's.
    const type = 'leave.approved for SSN 123-45-6789';
    const delivery = async (occurredAt: string) => {
      const signed = await createSignedDelivery({ secret, type, occurredAt, data: { leaveRequestId } });
      return { method: 'POST', headers: signed.headers, body: encoder.encode(signed.body) };
    };
    await (await receiver.handle(await delivery('2026-11-24T10:00:00Z'))).background;
    const answer = await receiver.handle(await delivery('2026-11-24T09:00:00Z'));
    expect(answer.body).toBe('{"received":true,"stale":true}');
    await receiver.close();
    const skipped = logger.lines.find((line) =>
      line.msg?.startsWith('workforce-webhooks: stale event skipped'),
    );
    expect(skipped?.obj).toEqual({ eventId: expect.any(String), newerEventId: expect.any(String) });
    expect(JSON.stringify(logger.lines)).not.toContain('123-45-6789');
  });
});

describe('an ordering.key function that throws', () => {
  it('accepts the event, whose attempts fail, are retried and end as a dead letter; the fix is logged once per type', async () => {
    const logger = recordingLogger();
    const letters: DeadLetter[] = [];
    let keyCalls = 0;
    const receiver = make({
      logger,
      onDeadLetter: (letter) => void letters.push(letter),
      ordering: {
        key: () => {
          keyCalls++;
          throw new TypeError('bad key rule');
        },
      },
    });
    let runs = 0;
    receiver.on('leave.approved', () => {
      runs++;
    });
    const first = await leave('leave.approved', 1, crypto.randomUUID());
    const second = await leave('leave.approved', 2, crypto.randomUUID());
    expect((await receiver.handle(first)).status).toBe(202);
    expect((await receiver.handle(second)).status).toBe(202);
    await until(() => letters.length === 2, 'both dead letters');
    await receiver.close();
    expect(runs).toBe(0);
    expect(letters.map((letter) => [letter.attempts, (letter.error as Error).message])).toEqual([
      [3, 'bad key rule'],
      [3, 'bad key rule'],
    ]);
    // Read at accept time, and once per attempt.
    expect(keyCalls).toBeGreaterThanOrEqual(8);
    const told = logger.lines.filter((line) => line.msg?.includes('ordering.key threw'));
    expect(told).toHaveLength(1);
    expect(told[0]).toMatchObject({
      level: 'error',
      obj: { type: 'leave.approved', errorName: 'TypeError' },
    });
  });

  it('throwing only at accept time: the event is claimed without its key, then runs ordered', async () => {
    let calls = 0;
    const receiver = make({
      ordering: {
        key: (event) => {
          calls++;
          if (calls === 1) throw new Error('flaky rule');
          return event.data.leaveRequestId as string;
        },
      },
    });
    const keys: (string | undefined)[] = [];
    receiver.on('leave.approved', (_event, ctx) => void keys.push(ctx.orderingKey));
    const key = crypto.randomUUID();
    expect((await receiver.handle(await leave('leave.approved', 1, key))).status).toBe(202);
    await until(() => keys.length === 1, 'the run');
    await receiver.close();
    expect(keys).toEqual([key]);
  });

  it('returning a non-string (number, null, object, empty string) leaves the event unordered and runs it', async () => {
    for (const value of [5, null, {}, '']) {
      const receiver = make({ ordering: { key: () => value as never } });
      const keys: (string | undefined)[] = [];
      receiver.on('leave.approved', (_event, ctx) => void keys.push(ctx.orderingKey));
      await (await receiver.handle(await leave('leave.approved', 1, crypto.randomUUID()))).background;
      await until(() => keys.length === 1, 'the run');
      await receiver.close();
      expect(keys).toEqual([undefined]);
    }
  });
});

const refusingWatermarks = () => refusingOrderingStore();

describe('a watermark write the store refuses', () => {
  it('is written again once the store takes it, the key kept meanwhile: an older event waits, then is skipped', async () => {
    const { store, state, watermark } = refusingWatermarks();
    const stale: string[] = [];
    const logger = recordingLogger();
    const receiver = make({ store, logger, leaseMs: 150, onStale: (event) => void stale.push(event.type) });
    const ran: string[] = [];
    receiver.on('leave.*', (event) => {
      ran.push(event.type);
      if (event.type === 'leave.cancelled') state.refusing = true;
    });
    const key = crypto.randomUUID();
    const newer = await leave('leave.cancelled', 2, key);
    expect((await receiver.handle(newer)).status).toBe(202);
    await until(() => state.refused >= 2, 'a retried write');
    // The older event arrives while the watermark is not written: it must not take the key, many leases long.
    expect((await receiver.handle(await leave('leave.approved', 1, key))).status).toBe(202);
    await sleep(600);
    expect(ran).toEqual(['leave.cancelled']);
    state.refusing = false;
    await until(() => stale.length === 1, 'the older event to be skipped');
    await receiver.close();
    expect(ran).toEqual(['leave.cancelled']);
    expect(stale).toEqual(['leave.approved']);
    expect(await watermark(key)).toBe(markOf(newer.event));
    expect(logger.lines.filter((line) => line.level === 'error').map((line) => line.msg)).toEqual([
      'workforce-webhooks: could not give up an ordering key',
    ]);
  });

  it("does not hold the queue's worker while it is retried: events of other keys run", async () => {
    const { store, state } = refusingWatermarks();
    const receiver = make({
      store,
      queue: createMemoryQueue({ concurrency: 1, backoff: () => 1, attempts: 3 }),
    });
    const ran: string[] = [];
    receiver.on('leave.*', (event) => {
      ran.push(event.type);
      state.refusing = true;
    });
    await receiver.handle(await leave('leave.cancelled', 2, crypto.randomUUID()));
    await until(() => state.refused >= 1, 'the refused write');
    await receiver.handle(await leave('leave.approved', 1, crypto.randomUUID()));
    await until(() => ran.length === 2, 'the event of another key');
    state.refusing = false;
    await receiver.close();
    expect(ran).toEqual(['leave.cancelled', 'leave.approved']);
  });

  it('is given up after ordering.maxWaitMs, logged once at error level; the key then lapses to the next event', async () => {
    const { store, state, watermark } = refusingWatermarks();
    const logger = recordingLogger();
    const receiver = make({ store, logger, leaseMs: 150, ordering: { maxWaitMs: 300 } });
    const ran: string[] = [];
    receiver.on('leave.*', (event) => {
      ran.push(event.type);
      if (event.type === 'leave.requested') state.refusing = true;
    });
    const key = crypto.randomUUID();
    await receiver.handle(await leave('leave.requested', 0, key));
    await until(
      () => logger.lines.some((line) => line.msg?.includes('gave up writing an ordering watermark')),
      'the give-up',
    );
    const refused = state.refused;
    state.refusing = false;
    const next = await leave('leave.approved', 1, key);
    await receiver.handle(next);
    await until(() => ran.length === 2, 'the next event, once the lease lapsed');
    await receiver.close();
    expect(refused).toBeGreaterThan(1);
    expect(ran).toEqual(['leave.requested', 'leave.approved']);
    expect(await watermark(key)).toBe(markOf(next.event));
    expect(
      logger.lines.filter((line) => line.msg?.includes('gave up writing an ordering watermark')),
    ).toMatchObject([{ level: 'error' }]);
  });
});
