// The in-process store and queue at their edges: a store at its max, delays and close timeouts no timer can keep,
// options of the wrong type, and dead-letter cursors the queue never gave.
import { describe, expect, it } from 'vitest';
import {
  ConfigurationError,
  createMemoryQueue,
  createMemoryStore,
  createReceiver,
  type DeadLetter,
  type JobProcessor,
  type QueuedEvent,
  type ReceiverOptions,
} from 'workforce-webhooks';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { recordingLogger } from '../support/logger.js';

const secret = 'whsec_memory_faults';
const encoder = new TextEncoder();
const MAX_TIMER_MS = 2 ** 31 - 1;

async function delivery(data?: Record<string, unknown>) {
  const signed = await createSignedDelivery({
    secret,
    type: 'leave.approved',
    ...(data ? { data } : {}),
  } as never);
  return { method: 'POST', headers: signed.headers, body: encoder.encode(signed.body), event: signed.event };
}

const receiverWith = (options: Partial<ReceiverOptions> = {}) =>
  createReceiver({
    secret,
    logger: false,
    queue: createMemoryQueue({ backoff: () => 1, attempts: 3 }),
    ...options,
  });

const job = (n: number): QueuedEvent => ({
  event: {
    id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
    type: 'leave.approved',
    apiVersion: '2026-10-15',
    occurredAt: '2026-11-21T00:00:00.000Z',
    organizationId: '00000000-0000-4000-8000-000000000001',
    data: {},
  },
  deliveryId: `d${n}`,
});

function started(process: JobProcessor, options: Parameters<typeof createMemoryQueue>[0] = {}) {
  const letters: DeadLetter[] = [];
  const retries: number[] = [];
  const logger = recordingLogger();
  const queue = createMemoryQueue({ backoff: () => 1, ...options });
  queue.start({
    process,
    onDeadLetter: async (letter) => void letters.push(letter),
    onRetry: (_data, attempt) => void retries.push(attempt),
    logger,
  });
  return { queue, letters, retries, logger };
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it holds, or fails after `ms` (a wide bound on a hang, not a timing assertion). */
async function until(check: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await sleep(5);
  }
}

describe('memory store at its max', () => {
  it('never forgets a claim in flight: done marks of newer ids push out only older done ids', async () => {
    const store = createMemoryStore({ max: 2 });
    const running = await store.claim('running', 30_000);
    if (running.status !== 'claimed') throw new Error('expected a claim');
    for (const id of ['a', 'b', 'c']) {
      const claim = await store.claim(id, 30_000);
      expect(claim.status === 'claimed' && (await store.complete(id, claim.token, 60_000))).toBe(true);
    }
    expect((await store.claim('running', 30_000)).status).toBe('in_progress');
    expect(await store.renew('running', running.token, 30_000)).toBe(true);
    // The last two done ids are remembered, the oldest is not.
    expect((await store.claim('c', 30_000)).status).toBe('done');
    expect((await store.claim('b', 30_000)).status).toBe('done');
    expect((await store.claim('a', 30_000)).status).toBe('claimed');
    expect(await store.complete('running', running.token, 60_000)).toBe(true);
    expect((await store.claim('running', 30_000)).status).toBe('done');
  });

  it('renews and marks done a lapsed lease nobody took, even once swept among many claims', async () => {
    let clock = 1_000_000;
    const store = createMemoryStore({ max: 10, now: () => clock });
    const slow = await store.claim('slow', 100);
    const late = await store.claim('late', 100);
    if (slow.status !== 'claimed' || late.status !== 'claimed') throw new Error('expected claims');
    clock += 1000; // both owners held the event loop past their lease
    // Enough new claims for the table to look for lapsed ones.
    for (let i = 0; i < 3000; i++) await store.claim(`other-${i}`, 30_000);
    expect(await store.renew('slow', slow.token, 30_000)).toBe(true);
    expect((await store.claim('slow', 30_000)).status).toBe('in_progress');
    expect(await store.complete('late', late.token, 60_000)).toBe(true);
    expect((await store.claim('late', 30_000)).status).toBe('done');
    // A lapsed lease another delivery took stays that delivery's.
    clock += 60_000;
    const taker = await store.claim('slow', 30_000);
    expect(taker.status).toBe('claimed');
    expect(await store.renew('slow', slow.token, 30_000)).toBe(false);
    expect(await store.complete('slow', slow.token, 60_000)).toBe(false);
  });

  it('inline: an event answered 202 whose claim would be pushed out by later deliveries still ends processed', async () => {
    const store = createMemoryStore({ max: 2 });
    const receiver = receiverWith({ store, mode: 'inline', ackDeadlineMs: 20, leaseMs: 60 });
    const processed: string[] = [];
    const aborted: unknown[] = [];
    receiver.on('leave.approved', async (event, ctx) => {
      if ((event.data as Record<string, unknown>).slow) {
        // Long enough for several renewals (every 20 ms).
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 200);
          ctx.signal.addEventListener('abort', () => {
            clearTimeout(timer);
            resolve();
          });
        });
        if (ctx.signal.aborted) return void aborted.push(ctx.signal.reason);
      }
      processed.push(event.id);
    });
    const slow = await delivery({ slow: true });
    const answer = await receiver.handle(slow);
    expect(answer.status).toBe(202); // the sender will not send it again
    // Two more deliveries, each marked done: with max 2, more than the store remembers beside the running one.
    expect((await receiver.handle(await delivery())).status).toBe(200);
    expect((await receiver.handle(await delivery())).status).toBe(200);
    await answer.background;
    await until(() => processed.includes(slow.event.id));
    expect(aborted).toEqual([]);
    expect((await receiver.deadLetters()).items).toEqual([]);
    await receiver.close();
  });

  it('inline: a copy of a running event is answered 409 however many ids were claimed since', async () => {
    const store = createMemoryStore({ max: 1 });
    const receiver = receiverWith({ store, mode: 'inline', ackDeadlineMs: 20 });
    const gate = deferred();
    let runs = 0;
    receiver.on('leave.approved', async (event) => {
      runs++;
      if ((event.data as Record<string, unknown>).slow) await gate.promise;
    });
    const slow = await delivery({ slow: true });
    const first = receiver.handle(slow);
    await until(() => runs === 1);
    expect((await receiver.handle(await delivery())).status).toBe(200);
    expect((await receiver.handle(slow)).body).toBe('{"error":"in_progress"}');
    gate.resolve();
    await first;
    expect(runs).toBe(2);
    await receiver.close();
  });
});

describe('memory queue: delays no timer can keep', () => {
  it('waits the longest timer for a backoff past 2^31 - 1 ms instead of retrying at once, and warns once', async () => {
    let runs = 0;
    const { queue, retries, letters, logger } = started(
      () => {
        runs++;
        throw new Error('down');
      },
      { attempts: 2, backoff: () => 2 ** 31 + 1000 },
    );
    await queue.enqueue(job(1));
    await queue.enqueue(job(2));
    await until(() => retries.length === 2);
    // An overflowed timer would have fired after 1 ms: give it many times that.
    await sleep(100);
    expect(runs).toBe(2);
    expect(letters).toEqual([]);
    expect((await queue.counts?.())?.depth).toBe(2);
    const warnings = logger.lines.filter((line) => line.level === 'warn');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.msg).toContain(String(MAX_TIMER_MS));
    // close() gives the waiting retries up as dead letters.
    await queue.close({ timeoutMs: 50 });
    expect(letters.map((letter) => letter.waiting)).toEqual([true, true]);
  });

  it('receiver: a backoff past 2^31 ms does not retry at once', async () => {
    const receiver = receiverWith({
      queue: createMemoryQueue({ attempts: 2, backoff: () => 2 ** 31 + 1000 }),
    });
    let runs = 0;
    receiver.on('leave.approved', () => {
      runs++;
      throw new Error('down');
    });
    await receiver.handle(await delivery());
    await until(() => runs === 1);
    await sleep(100);
    expect(runs).toBe(1);
    expect((await receiver.deadLetters()).items).toHaveLength(0);
    await receiver.close({ timeoutMs: 50 });
  });
});

describe('options of the wrong type', () => {
  it('createMemoryQueue refuses a backoff that is not a function, and options that are not an object', () => {
    expect(() => createMemoryQueue({ backoff: 1000 as never })).toThrow(ConfigurationError);
    expect(() => createMemoryQueue({ backoff: 'exponential' as never })).toThrow(
      /backoff must be a function/,
    );
    expect(() => createMemoryQueue(null as never)).toThrow(ConfigurationError);
    expect(() => createMemoryQueue({ concurrency: '10' as never })).toThrow(ConfigurationError);
  });

  it('createMemoryStore refuses a now that is not a function, and options that are not an object', () => {
    expect(() => createMemoryStore({ now: 'Date.now' as never })).toThrow(ConfigurationError);
    expect(() => createMemoryStore({ now: 0 as never })).toThrow(/now must be a function/);
    expect(() => createMemoryStore(null as never)).toThrow(ConfigurationError);
    expect(() => createMemoryStore({ max: '10' as never })).toThrow(ConfigurationError);
  });
});

describe('dead-letter cursors', () => {
  const failing = () => {
    const receiver = receiverWith({ queue: createMemoryQueue({ backoff: () => 1, attempts: 1 }) });
    receiver.on('leave.approved', () => {
      throw new Error('down');
    });
    return receiver;
  };

  it('refuses a cursor past any this queue gave, rather than reading the first page', async () => {
    const receiver = failing();
    for (let i = 0; i < 3; i++) await receiver.handle(await delivery());
    await until(async () => (await receiver.deadLetters()).items.length === 3);
    await expect(receiver.deadLetters({ cursor: '999999999999' })).rejects.toBeInstanceOf(ConfigurationError);
    await expect(receiver.deadLetters({ cursor: '4' })).rejects.toBeInstanceOf(ConfigurationError);
    await expect(receiver.deadLetters({ cursor: '0' })).rejects.toBeInstanceOf(ConfigurationError);
    // The cursor of the newest letter is one it could give: it reads the letters older than it.
    expect((await receiver.deadLetters({ cursor: '3' })).items).toHaveLength(2);
    await receiver.close();
  });

  it('limit and cursor edges: 0, -1 and NaN refused, 1001 read as 1000, bad cursors refused, pages neither repeat nor skip', async () => {
    const receiver = failing();
    for (let i = 0; i < 5; i++) await receiver.handle(await delivery());
    await until(async () => (await receiver.deadLetters()).items.length === 5);
    await expect(receiver.deadLetters({ limit: 0 })).rejects.toBeInstanceOf(ConfigurationError);
    await expect(receiver.deadLetters({ limit: -1 })).rejects.toBeInstanceOf(ConfigurationError);
    await expect(receiver.deadLetters({ limit: Number.NaN })).rejects.toBeInstanceOf(ConfigurationError);
    expect((await receiver.deadLetters({ limit: 1001 })).items).toHaveLength(5);
    await expect(receiver.deadLetters({ cursor: 'abc' })).rejects.toBeInstanceOf(ConfigurationError);
    await expect(receiver.deadLetters({ cursor: '-1' })).rejects.toBeInstanceOf(ConfigurationError);
    const first = await receiver.deadLetters({ limit: 2 });
    const second = await receiver.deadLetters({ limit: 2, cursor: first.cursor });
    const third = await receiver.deadLetters({ limit: 2, cursor: second.cursor });
    expect(third.cursor).toBeUndefined();
    const ids = [...first.items, ...second.items, ...third.items].map((letter) => letter.event.id);
    expect(new Set(ids).size).toBe(5);
    await receiver.close();
  });

  it('keeps a cursor valid after the letter it points at was discarded', async () => {
    const receiver = failing();
    for (let i = 0; i < 3; i++) await receiver.handle(await delivery());
    await until(async () => (await receiver.deadLetters()).items.length === 3);
    const first = await receiver.deadLetters({ limit: 1 });
    expect(await receiver.discardDeadLetters({})).toBe(3);
    expect(await receiver.deadLetters({ cursor: first.cursor })).toEqual({ items: [], cursor: undefined });
    await receiver.close();
  });
});

describe('replays of the memory queue', () => {
  it('a replay into a full queue rejects queue_full and keeps the letter', async () => {
    const receiver = receiverWith({
      queue: createMemoryQueue({ backoff: () => 1, maxQueued: 1, concurrency: 1, attempts: 1 }),
    });
    const gate = deferred();
    receiver.on('leave.approved', async (event) => {
      if ((event.data as Record<string, unknown>).block) await gate.promise;
      else throw new Error('down');
    });
    const failed = await delivery();
    await receiver.handle(failed);
    await until(async () => (await receiver.deadLetters()).items.length === 1);
    expect((await receiver.handle(await delivery({ block: true }))).status).toBe(202);
    await expect(receiver.replay(failed.event.id)).rejects.toMatchObject({ code: 'queue_full' });
    expect((await receiver.deadLetters()).items).toHaveLength(1);
    gate.resolve();
    await receiver.close();
  });
});
