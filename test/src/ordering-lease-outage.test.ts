// Spec rule 4 while the store refuses the writes that keep a key (its lease renewals, the watermark write) for many
// leases, as Redis out of memory does, while it still lets another event take a lapsed key: the key stays with its
// run in this process, so no other event of the record runs beside it or over it meanwhile.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createMemoryQueue, createMemoryStore, createReceiver } from 'workforce-webhooks';
import { markOf } from '../../src/ordering-mark.js';
import { recordingLogger } from '../support/logger.js';
import { signedLeave, until } from '../support/ordering-scenario.js';
import { refusingOrderingStore } from '../support/refusing-ordering-store.js';

const secret = 'whsec_ordering_lease_outage';

const leave = (type: string, second: number, key: string) => signedLeave(secret, type, second, key);

// Renewals refused too: the key's lease lapses in the store while its run goes on here.
const refusingKeeps = () => refusingOrderingStore({ renewals: true });

const leaseMs = 150;

describe('a store refusing the writes that keep a key for many leases', () => {
  it('keeps an older event of the record from running over the newer one whose watermark write is retried', async () => {
    const { store, state, watermark } = refusingKeeps();
    const stale: string[] = [];
    const receiver = createReceiver({
      secret,
      store,
      logger: recordingLogger(),
      leaseMs,
      queue: createMemoryQueue({ backoff: () => 1, attempts: 3 }),
      ordering: {},
      onStale: (event) => void stale.push(event.type),
    });
    onTestFinished(() => receiver.close({ timeoutMs: 100 }));
    let releaseNewer!: () => void;
    const newerRunning = new Promise<void>((resolve) => {
      releaseNewer = resolve;
    });
    const ran: string[] = [];
    receiver.on('leave.*', async (event) => {
      ran.push(event.type);
      if (event.type !== 'leave.cancelled') return;
      await newerRunning;
      // The store stops taking writes just as the newer event's handlers end.
      state.refusing = true;
    });
    const key = crypto.randomUUID();
    const newer = await leave('leave.cancelled', 2, key);
    expect((await receiver.handle(newer)).status).toBe(202);
    await until(() => ran.length === 1, 'the newer event');
    // Accepted while the newer event holds the key: it waits in this process for the key.
    expect((await receiver.handle(await leave('leave.approved', 1, key))).status).toBe(202);
    releaseNewer();
    await until(() => state.refused >= 2, 'a retried write');
    // Many leases: the store's lease would have lapsed long ago.
    await sleep(leaseMs * 6);
    expect(ran).toEqual(['leave.cancelled']);
    state.refusing = false;
    await until(() => stale.length === 1, 'the older event to be skipped');
    expect(ran).toEqual(['leave.cancelled']);
    expect(stale).toEqual(['leave.approved']);
    expect(await watermark(key)).toBe(markOf(newer.event));
  });

  it('runs no other event of the record beside handlers whose lease renewals are refused', async () => {
    const { store, state } = refusingKeeps();
    const receiver = createReceiver({
      secret,
      store,
      logger: recordingLogger(),
      leaseMs,
      queue: createMemoryQueue({ backoff: () => 1, attempts: 3 }),
      ordering: {},
    });
    onTestFinished(() => receiver.close({ timeoutMs: 100 }));
    let releaseOlder!: () => void;
    const olderRunning = new Promise<void>((resolve) => {
      releaseOlder = resolve;
    });
    const log: string[] = [];
    receiver.on('leave.*', async (event) => {
      log.push(`start ${event.type}`);
      if (event.type === 'leave.approved') await olderRunning;
      log.push(`end ${event.type}`);
    });
    const key = crypto.randomUUID();
    expect((await receiver.handle(await leave('leave.approved', 1, key))).status).toBe(202);
    await until(() => log.length === 1, 'the older event');
    // The store refuses the renewals of the running event's lease, for many leases.
    state.refusing = true;
    expect((await receiver.handle(await leave('leave.cancelled', 2, key))).status).toBe(202);
    await until(() => state.refused >= 2, 'refused renewals');
    await sleep(leaseMs * 6);
    expect(log).toEqual(['start leave.approved']);
    state.refusing = false;
    releaseOlder();
    await until(() => log.length === 4, 'the newer event');
    expect(log).toEqual([
      'start leave.approved',
      'end leave.approved',
      'start leave.cancelled',
      'end leave.cancelled',
    ]);
  });

  it('keeps a newer event of the record waiting behind handlers whose lease lapsed in the store (the event loop silent past it)', async () => {
    // The store's clock, injected: jumping it ahead is the event loop silent past the lease.
    let skew = 0;
    const receiver = createReceiver({
      secret,
      store: createMemoryStore({ now: () => Date.now() + skew }),
      logger: recordingLogger(),
      leaseMs: 600,
      queue: createMemoryQueue({ concurrency: 4 }),
      ordering: {},
    });
    onTestFinished(() => receiver.close({ timeoutMs: 100 }));
    let releaseOlder!: () => void;
    const olderRunning = new Promise<void>((resolve) => {
      releaseOlder = resolve;
    });
    const log: string[] = [];
    let olderSignal: AbortSignal | undefined;
    receiver.on('leave.*', async (event, ctx) => {
      log.push(`start ${event.type}`);
      if (event.type === 'leave.requested') {
        olderSignal = ctx.signal;
        await olderRunning;
      }
      log.push(`end ${event.type}`);
    });
    const key = crypto.randomUUID();
    expect((await receiver.handle(await leave('leave.requested', 1, key))).status).toBe(202);
    await until(() => log.length === 1, 'the older event');
    skew += 5_000;
    expect((await receiver.handle(await leave('leave.approved', 2, key))).status).toBe(202);
    // Several renewals of the older event's run.
    await sleep(700);
    expect(log).toEqual(['start leave.requested']);
    releaseOlder();
    await until(() => log.length === 4, 'the newer event');
    expect(log).toEqual([
      'start leave.requested',
      'end leave.requested',
      'start leave.approved',
      'end leave.approved',
    ]);
    expect(olderSignal?.aborted).toBe(false);
  });
});
