// The memory store's ordering (src/ordering-store.ts): leases and holds are never evicted, watermarks are bounded by
// `max`, and a forgotten lapsed hold goes; alone with an injected clock, then through a receiver.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import {
  createMemoryQueue,
  createMemoryStore,
  createReceiver,
  type KeyEntry,
  type OrderingStore,
} from 'workforce-webhooks';
import { LAPSED_KEPT_MS } from '../../src/ordering-store.js';
import { signedLeave, until } from '../support/ordering-scenario.js';

const DAY = 24 * 60 * 60 * 1000;
const mark = (i: number): string => `00000170000000${String(i).padStart(7, '0')} e-${i}`;

// The answer of a step the memory store gives at once (no promise: its ordered events cost none).
function atOnce<T>(answer: T | Promise<T>): T {
  if (answer instanceof Promise) throw new Error('expected the memory store to answer at once');
  return answer;
}

// The memory store's ordering on an injected clock, its `enter` and `leave` checked to answer at once.
function memoryOrdering(max: number) {
  const clock = { now: 1_000_000 };
  const store = createMemoryStore({ max, now: () => clock.now });
  const ordering = store.ordering;
  if (ordering === undefined) throw new Error('the memory store has no ordering');
  const keys = {
    ...ordering,
    enter: (...args: Parameters<OrderingStore['enter']>): KeyEntry => atOnce(ordering.enter(...args)),
    leave: (...args: Parameters<OrderingStore['leave']>): boolean => atOnce(ordering.leave(...args)),
  };
  return { clock, store, keys };
}

// Enters and leaves `count` other keys, each with a watermark: what a busy receiver's other records do.
function passThrough(keys: ReturnType<typeof memoryOrdering>['keys'], count: number, from = 0): void {
  for (let i = from; i < from + count; i++) {
    expect(keys.enter(`other-${i}`, `event-${i}`, 30_000)).toEqual({
      status: 'entered',
      watermark: undefined,
    });
    expect(keys.leave(`other-${i}`, `event-${i}`, mark(i), DAY)).toBe(true);
  }
}

describe('memory ordering store', () => {
  it('keeps a running key and a held key however many other keys pass through, and answers at once', async () => {
    const { clock, keys } = memoryOrdering(4);
    expect(keys.enter('running', 'a', 30_000)).toEqual({ status: 'entered', watermark: undefined });
    expect(keys.enter('held', 'failing', 30_000)).toEqual({ status: 'entered', watermark: undefined });
    expect(await keys.hold('held', 'failing', 60_000)).toBe(true);
    passThrough(keys, 4 * 3);
    clock.now += 10_000;
    expect(keys.enter('running', 'newer', 30_000)).toEqual({ status: 'busy', retryInMs: 20_001 });
    expect(keys.enter('held', 'newer', 30_000)).toEqual({ status: 'busy', retryInMs: 50_001 });
    // The running event renews its lease, the failing one is still the key's: both leave it as owners.
    expect(keys.enter('running', 'a', 30_000).status).toBe('entered');
    expect(keys.leave('running', 'a', mark(100), DAY)).toBe(true);
    expect(keys.enter('running', 'newer', 30_000)).toEqual({ status: 'entered', watermark: mark(100) });
    clock.now += 50_001;
    expect(keys.enter('held', 'newer', 30_000).status).toBe('entered');
  });

  it('remembers the watermarks of the last max keys moved', async () => {
    const { keys, store } = memoryOrdering(4);
    passThrough(keys, 6);
    expect(await keys.watermark('other-1')).toBeUndefined();
    expect(await keys.watermark('other-2')).toBe(mark(2));
    // Moving a watermark makes it the newest; an older mark leaves it where it is.
    expect(keys.leave('other-2', 'late', mark(102), DAY)).toBe(false);
    expect(keys.leave('other-3', 'stale', mark(0), DAY)).toBe(false);
    passThrough(keys, 3, 6);
    expect(await keys.watermark('other-2')).toBe(mark(102));
    expect(await keys.watermark('other-3')).toBeUndefined();
    const claim = await store.claim('event', 30_000, 'other-8');
    expect(claim).toEqual({ status: 'claimed', token: expect.any(String), watermark: mark(8) });
  });

  it('forgets a lapsed hold nobody came back to LAPSED_KEPT_MS after it ended', async () => {
    const { clock, keys } = memoryOrdering(4);
    keys.enter('key', 'failing', 30_000);
    expect(await keys.hold('key', 'failing', 1000)).toBe(true);
    clock.now += 1000 + LAPSED_KEPT_MS;
    // Still remembered at its last millisecond: a retry keeps its first entry, so its hold has already ended.
    expect(keys.enter('key', 'failing', 30_000).status).toBe('entered');
    expect(await keys.hold('key', 'failing', 1000)).toBe(true);
    expect(keys.enter('key', 'newer', 30_000).status).toBe('entered');
    expect(keys.leave('key', 'newer', undefined, DAY)).toBe(true);

    keys.enter('key', 'failing', 30_000);
    expect(await keys.hold('key', 'failing', 1000)).toBe(true);
    clock.now += 1001 + LAPSED_KEPT_MS;
    // Forgotten: its retry is a first entry, and holds the key for maxWaitMs again.
    expect(keys.enter('key', 'failing', 30_000).status).toBe('entered');
    expect(await keys.hold('key', 'failing', 1000)).toBe(true);
    expect(keys.enter('key', 'newer', 30_000)).toEqual({ status: 'busy', retryInMs: 1001 });
  });

  it('keeps every live lease and hold through the sweeps of forgotten ones', async () => {
    const { clock, keys } = memoryOrdering(4);
    // Forgotten leases, then more live leases and holds than a sweep looks at, then new keys that sweep.
    for (let i = 0; i < 1500; i++) keys.enter(`gone-${i}`, 'crashed', 1000);
    clock.now += 1001 + LAPSED_KEPT_MS;
    for (let i = 0; i < 3000; i++) {
      keys.enter(`live-${i}`, `event-${i}`, 60_000);
      if (i % 2 === 0) await keys.hold(`live-${i}`, `event-${i}`, 60_000);
    }
    passThrough(keys, 5000);
    clock.now += 30_000;
    for (let i = 0; i < 3000; i++)
      expect(keys.enter(`live-${i}`, 'newer', 60_000)).toEqual({ status: 'busy', retryInMs: 30_001 });
    expect(keys.enter('gone-0', 'newer', 1000).status).toBe('entered');
    expect(keys.leave('gone-1', 'crashed', undefined, DAY)).toBe(false);
  });
});

describe('memory ordering store through a receiver, with other records passing through', () => {
  const secret = 'whsec_memory_ordering_test';
  const held = '6f1d2c3b-0000-4000-8000-0000000000a1';
  const other = (i: number) => `6f1d2c3b-0000-4000-8000-${String(i).padStart(12, '0')}`;

  const delivery = (type: string, second: number, key: string) => signedLeave(secret, type, second, key);

  it('never runs a newer event of a record beside its running one', async () => {
    const receiver = createReceiver({
      secret,
      store: createMemoryStore({ max: 4 }),
      queue: createMemoryQueue({ concurrency: 10 }),
      ordering: {},
    });
    const running = new Set<string>();
    const overlaps: string[] = [];
    const done: string[] = [];
    receiver.on('leave.*', async (event, ctx) => {
      const key = ctx.orderingKey ?? '';
      if (running.has(key)) overlaps.push(`${event.type} started while another event of ${key} ran`);
      running.add(key);
      await sleep(key === held && event.type === 'leave.requested' ? 400 : 5);
      running.delete(key);
      done.push(key);
    });
    await receiver.handle(await delivery('leave.requested', 1, held));
    await until(() => running.has(held), 'the first event of the record');
    // More other records than `max`, handled one after the other while the first event runs.
    for (let i = 0; i < 8; i++) {
      await receiver.handle(await delivery('leave.requested', 1, other(i)));
      await until(() => done.length === i + 1, `record ${i}`);
    }
    await receiver.handle(await delivery('leave.approved', 2, held));
    await until(() => done.filter((key) => key === held).length === 2, 'both events of the record');
    await receiver.close();
    expect(overlaps).toEqual([]);
  });

  it('keeps newer events of a record behind its failing event for maxWaitMs', async () => {
    const receiver = createReceiver({
      secret,
      store: createMemoryStore({ max: 4 }),
      queue: createMemoryQueue({ attempts: 5, backoff: () => 60_000 }),
      ordering: { maxWaitMs: 60_000 },
    });
    const runs: string[] = [];
    receiver.on('leave.*', async (event, ctx) => {
      runs.push(`${ctx.orderingKey === held ? 'held' : 'other'}:${event.type}`);
      if (ctx.orderingKey === held && event.type === 'leave.requested') throw new Error('down');
    });
    await receiver.handle(await delivery('leave.requested', 1, held));
    await until(() => runs.length === 1, 'the failing event');
    for (let i = 0; i < 8; i++) await receiver.handle(await delivery('leave.requested', 1, other(i)));
    await until(() => runs.length === 9, 'the other records');
    await receiver.handle(await delivery('leave.approved', 2, held));
    await sleep(200);
    expect(runs).not.toContain('held:leave.approved');
    await receiver.close({ timeoutMs: 10 });
  });
});
