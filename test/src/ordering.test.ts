// Spec rule 4 done by the receiver, in one process: memory store and queue, through `handle` and over loopback.
import { createServer } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  byDefaultKeys,
  createMemoryQueue,
  createMemoryStore,
  createReceiver,
  type DeadLetter,
  type DedupeStore,
  type KeyEntry,
  type OrderingStore,
  OrderingWait,
  type ReceiverOptions,
  WebhookError,
  type WorkforceEvent,
} from 'workforce-webhooks';
import { createNodeHandler } from 'workforce-webhooks/node';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { createOrdering } from '../../src/ordering.js';
import { markedEvent, markOf } from '../../src/ordering-mark.js';
import { listen } from '../contract/adapter-listen.js';
import { recordingLogger } from '../support/logger.js';
import {
  checkOrdering,
  deliverShuffled,
  leaveLifecycles,
  type RunRecord,
  signedLeave,
  stateOf,
  until,
} from '../support/ordering-scenario.js';

const secret = 'whsec_ordering_test';
const encoder = new TextEncoder();
const leaveRequestId = '6f1d2c3b-0000-4000-8000-00000000abcd';

const leave = (type: string, second: number, key = leaveRequestId) => signedLeave(secret, type, second, key);

const make = (options: Partial<ReceiverOptions> = {}) =>
  createReceiver({
    secret,
    queue: createMemoryQueue({ backoff: () => 1, attempts: 3 }),
    ordering: {},
    ...options,
  });

describe('ordering keys', () => {
  it('keys leave.* by leaveRequestId by default, and takes more rules typed against the event map', () => {
    const key = byDefaultKeys({
      'employee.*': (event) => event.data.employeeId as string,
      'leave.approved': (event) => `approved:${event.data.leaveRequestId}`,
    });
    const event = (type: string, data: Record<string, unknown>) => ({ type, data }) as WorkforceEvent;
    expect(key(event('leave.cancelled', { leaveRequestId: 'l1' }))).toBe('l1');
    expect(key(event('leave.approved', { leaveRequestId: 'l1' }))).toBe('approved:l1');
    expect(key(event('employee.created', { employeeId: 'e1' }))).toBe('e1');
    expect(key(event('payroll.paid', { employeeId: 'e1' }))).toBeUndefined();
    expect(key(event('leave.requested', {}))).toBeUndefined();
    // @ts-expect-error: not a type or prefix of the map
    byDefaultKeys({ 'leave.aproved': () => 'x' });
  });
});

describe('markOf', () => {
  it('starts with the instant in milliseconds as 15 digits, then the digits below, for any RFC 3339 date', () => {
    fc.assert(
      // From 1970 to the last millisecond of year 9999 (the envelope's dates have four-digit years).
      fc.property(fc.integer({ min: 0, max: Date.UTC(9999, 11, 31, 23, 59, 59, 999) }), (ms) => {
        const occurredAt = new Date(ms).toISOString().replace('Z', '123Z');
        const mark = markOf({ id: 'x', occurredAt })!;
        expect(mark).toBe(`${String(ms).padStart(15, '0')}123000 x ${occurredAt}`);
      }),
    );
    // Not ordered: no date, or too far ahead for the mark's 15 digits.
    for (const occurredAt of ['soon', '+033658-09-27T01:46:40.000Z'])
      expect(markOf({ id: 'x', occurredAt })).toBeUndefined();
    // Before 1970: a `-` then 1e15 + ms, 15 digits, so it sorts before every mark from 1970 on.
    expect(markOf({ id: 'x', occurredAt: '1969-12-31T23:59:59Z' })).toBe(
      '-999999999999000000000 x 1969-12-31T23:59:59Z',
    );
  });

  it('reads a fraction of ten digits or more as its first nine, whatever its leading zeros', () => {
    const base = '2026-11-24T10:00:00';
    for (const [fraction, ms, below] of [
      ['.0123456789', 12, '345678'],
      ['.00123456789123', 1, '234567'],
      ['.1234567891', 123, '456789'],
    ] as const) {
      const mark = markOf({ id: 'x', occurredAt: `${base}${fraction}Z` })!;
      expect(mark.slice(0, 21)).toBe(`${String(Date.parse(`${base}Z`) + ms).padStart(15, '0')}${below}`);
      const offset = markOf({ id: 'x', occurredAt: `2026-11-24T12:00:00${fraction}+02:00` })!;
      expect(offset.slice(0, 21)).toBe(mark.slice(0, 21));
    }
  });

  it('gives back the id and occurredAt it was made of, a space in the date included (RFC 3339 allows it)', () => {
    const id = '6f1d2c3b-0000-4000-8000-0000000000cc';
    for (const occurredAt of [
      '2026-11-02T08:00:02.000Z',
      '2026-11-02 08:00:02.000Z',
      '2026-11-02 10:00:02+02:00',
    ])
      expect(markedEvent(markOf({ id, occurredAt })!)).toEqual({ id, occurredAt });
  });
});

describe('never older over newer (stale: skip)', () => {
  it('answers an event older than its record watermark 200 stale, never runs it, and reports it', async () => {
    const stale: [string, string][] = [];
    const receiver = make({ onStale: (event, newer) => void stale.push([event.id, newer.id]) });
    const ran: string[] = [];
    receiver.on('leave.*', (event, ctx) => {
      expect(ctx.orderingKey).toBe(leaveRequestId);
      ran.push(event.type);
    });
    const approved = await leave('leave.approved', 1);
    const cancelled = await leave('leave.cancelled', 2);
    expect((await receiver.handle(cancelled)).status).toBe(202);
    await until(() => ran.length === 1, 'the newer event');
    const answer = await receiver.handle(approved);
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ received: true, stale: true });
    await answer.background;
    // Marked done: a redelivery is a duplicate, not a second stale report.
    expect(JSON.parse((await receiver.handle(approved)).body)).toEqual({ received: true, duplicate: true });
    expect(ran).toEqual(['leave.cancelled']);
    expect(stale).toEqual([[approved.event.id, cancelled.event.id]]);
    await receiver.close();
  });

  it('compares occurredAt as instants (offsets, fractions), then by event id', async () => {
    const ran: string[] = [];
    const receiver = make();
    receiver.on('leave.*', (event) => void ran.push(event.id));
    const newer = await createSignedDelivery({
      secret,
      type: 'leave.cancelled',
      occurredAt: '2026-11-02T10:00:00.0000015+02:00',
      data: { leaveRequestId } as never,
    });
    const older = await createSignedDelivery({
      secret,
      type: 'leave.approved',
      occurredAt: '2026-11-02T08:00:00.000001Z',
      data: { leaveRequestId } as never,
    });
    const send = (d: { headers: Record<string, string>; body: string }) =>
      receiver.handle({ headers: d.headers, body: encoder.encode(d.body) });
    expect((await send(newer)).status).toBe(202);
    await until(() => ran.length === 1, 'the newer event');
    expect((await send(older)).status).toBe(200);
    expect(ran).toEqual([newer.event.id]);
    await receiver.close();
  });

  it("runs a stale event with ctx.stale under stale: 'run', and leaves the watermark where it was", async () => {
    const seen: [string, boolean][] = [];
    const receiver = make({ ordering: { stale: 'run' } });
    receiver.on('leave.*', (event, ctx) => void seen.push([event.type, ctx.stale]));
    expect((await receiver.handle(await leave('leave.cancelled', 2))).status).toBe(202);
    await until(() => seen.length === 1, 'the newer event');
    expect((await receiver.handle(await leave('leave.approved', 1))).status).toBe(202);
    await until(() => seen.length === 2, 'the stale event');
    expect((await receiver.handle(await leave('leave.requested', 0))).status).toBe(202);
    await until(() => seen.length === 3, 'the second stale event');
    expect(seen).toEqual([
      ['leave.cancelled', false],
      ['leave.approved', true],
      ['leave.requested', true],
    ]);
    await receiver.close();
  });

  it('changes nothing without the option: no key in the context, no stale answer', async () => {
    const seen: (string | undefined)[] = [];
    const receiver = createReceiver({ secret, queue: createMemoryQueue() });
    receiver.on('leave.*', (_event, ctx) => void seen.push(ctx.orderingKey));
    expect((await receiver.handle(await leave('leave.cancelled', 2))).status).toBe(202);
    expect((await receiver.handle(await leave('leave.approved', 1))).status).toBe(202);
    await until(() => seen.length === 2, 'both events');
    expect(seen).toEqual([undefined, undefined]);
    await receiver.close();
  });
});

describe('ordering options', () => {
  // A store whose ordering is the memory store's, less what `without` names.
  const storeWithout = (without: 'ordering' | 'renew'): DedupeStore => {
    const memory = createMemoryStore();
    if (without === 'ordering') return { ...memory, ordering: undefined };
    const { renew: _renew, ...rest } = memory.ordering!;
    return { ...memory, ordering: rest as OrderingStore };
  };

  it.each([
    [
      'a store without ordering',
      { store: storeWithout('ordering') },
      'ordering needs a store that keeps watermarks',
    ],
    [
      'an ordering store without renew (renewing with enter could take back a key its run gave up)',
      { store: storeWithout('renew') },
      "the store's ordering has no renew(key, owner, run, leaseMs)",
    ],
    [
      'a key that is not a function',
      { ordering: { key: 'leaveRequestId' } },
      'ordering.key must be a function',
    ],
    ['an unknown stale policy', { ordering: { stale: 'drop' } }, "ordering.stale must be 'skip' or 'run'"],
    [
      'a maxWaitMs that is not positive',
      { ordering: { maxWaitMs: 0 } },
      'ordering.maxWaitMs must be a positive number',
    ],
  ])('refuses %s when the receiver is made', (_name, options, message) => {
    const make = () => createReceiver({ secret, ordering: {}, ...options } as unknown as ReceiverOptions);
    expect(make).toThrow(message);
  });
});

describe('one at a time per key, and a failing event', () => {
  it('runs events of different keys at the same time: ordering does not reduce concurrency', async () => {
    const receiver = make();
    let running = 0;
    let most = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    receiver.on('leave.approved', async () => {
      running += 1;
      most = Math.max(most, running);
      await gate;
      running -= 1;
    });
    const keys = Array.from({ length: 5 }, (_, i) => `6f1d2c3b-0000-4000-8000-00000000000${i}`);
    const answers = await Promise.all(
      keys.map(async (key) => receiver.handle(await leave('leave.approved', 1, key))),
    );
    expect(answers.map((answer) => answer.status)).toEqual([202, 202, 202, 202, 202]);
    await until(() => most === keys.length, 'every key running at once');
    release();
    await Promise.all(answers.map((answer) => answer.background));
    expect(running).toBe(0);
  });

  it("aborts ctx.signal with lease_lost and logs an error when another event took the key's lease", async () => {
    let clock = Date.now();
    const store = createMemoryStore({ now: () => clock });
    const logger = recordingLogger();
    const receiver = make({ store, leaseMs: 300, logger });
    let started!: () => void;
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    let reason: unknown;
    receiver.on('leave.approved', async (_event, ctx) => {
      started();
      await new Promise<void>((resolve) => {
        ctx.signal.addEventListener('abort', () => {
          reason = ctx.signal.reason;
          resolve();
        });
      });
    });
    const answer = await receiver.handle(await leave('leave.approved', 1));
    await running;
    clock += 1000; // the key's lease lapses (a stalled process), and another event of the record takes it
    expect((await store.ordering!.enter(leaveRequestId, 'another-event', 60_000)).status).toBe('entered');
    await until(() => reason !== undefined, 'the renewal to find the key taken');
    expect(reason).toBeInstanceOf(WebhookError);
    expect((reason as WebhookError).code).toBe('lease_lost');
    expect(logger.lines.filter((line) => line.level === 'error').map((line) => line.msg)).toEqual([
      expect.stringMatching(/ordering key lease was lost.*signal is aborted/),
    ]);
    await answer.background;
  });

  // The memory store answers its ordering steps at once (no promise): a step that throws instead is handled as a
  // store that rejects would be.
  const throwingOnce = (step: 'enter' | 'leave'): DedupeStore => {
    const inner = createMemoryStore();
    const keys = inner.ordering!;
    let thrown = false;
    const once =
      <A extends unknown[], R>(run: (...args: A) => R) =>
      (...args: A): R => {
        if (thrown) return run(...args);
        thrown = true;
        throw new Error('the store failed');
      };
    return {
      ...inner,
      ordering: {
        ...keys,
        enter: step === 'enter' ? once(keys.enter) : keys.enter,
        leave: step === 'leave' ? once(keys.leave) : keys.leave,
      },
    };
  };

  it('retries an event whose key could not be taken (the store threw), and runs it once', async () => {
    const receiver = make({ store: throwingOnce('enter') });
    const runs: number[] = [];
    receiver.on('leave.approved', (_event, ctx) => {
      runs.push(ctx.attempt);
    });
    expect((await receiver.handle(await leave('leave.approved', 1))).status).toBe(202);
    await until(() => runs.length === 1, 'the retry');
    await receiver.close();
    expect(runs).toEqual([2]);
  });

  it('logs a key that could not be given up (the store threw once); the write is tried again and the next event runs', async () => {
    const logger = recordingLogger();
    const receiver = make({ store: throwingOnce('leave'), leaseMs: 200, logger });
    const runs: string[] = [];
    receiver.on('leave.*', (event) => {
      runs.push(event.type);
    });
    await receiver.handle(await leave('leave.requested', 0));
    await until(() => runs.length === 1, 'the first event');
    await receiver.handle(await leave('leave.approved', 1));
    await until(() => runs.length === 2, 'the next event, once the key was given up');
    await receiver.close();
    expect(runs).toEqual(['leave.requested', 'leave.approved']);
    expect(logger.lines.filter((line) => line.level === 'error').map((line) => line.msg)).toEqual([
      'workforce-webhooks: could not give up an ordering key',
    ]);
  });

  it('keeps order behind an event that fails twice then succeeds', async () => {
    const runs: string[] = [];
    const receiver = make();
    let failures = 0;
    receiver.on('leave.*', async (event) => {
      runs.push(`start:${event.type}`);
      await sleep(5);
      if (event.type === 'leave.requested' && failures++ < 2) {
        runs.push(`fail:${event.type}`);
        throw new Error('not yet');
      }
      runs.push(`end:${event.type}`);
    });
    expect((await receiver.handle(await leave('leave.requested', 0))).status).toBe(202);
    await until(() => runs.length > 0, 'the first run');
    expect((await receiver.handle(await leave('leave.approved', 1))).status).toBe(202);
    expect((await receiver.handle(await leave('leave.cancelled', 2))).status).toBe(202);
    await until(() => runs.includes('end:leave.cancelled'), 'the newest event');
    await receiver.close();
    // Failing twice then succeeding: nothing newer ran meanwhile, and nothing older ran after something newer.
    expect(runs.slice(0, 7)).toEqual([
      'start:leave.requested',
      'fail:leave.requested',
      'start:leave.requested',
      'fail:leave.requested',
      'start:leave.requested',
      'end:leave.requested',
      runs[6],
    ]);
    expect(runs.at(-1)).toBe('end:leave.cancelled');
    expect(runs.indexOf('start:leave.approved')).toBeLessThanOrEqual(runs.indexOf('start:leave.cancelled'));
  });

  it('moves the key on when an always failing event is dead-lettered', async () => {
    const letters: DeadLetter[] = [];
    const runs: string[] = [];
    const stale: string[] = [];
    const receiver = make({
      onDeadLetter: (letter) => void letters.push(letter),
      onStale: (event) => void stale.push(event.id),
    });
    receiver.on('leave.*', async (event) => {
      runs.push(event.type);
      await sleep(2);
      if (event.type === 'leave.approved') throw new Error('always');
    });
    await receiver.handle(await leave('leave.approved', 1));
    await until(() => runs.length > 0, 'the first run');
    await receiver.handle(await leave('leave.cancelled', 2));
    await until(() => runs.includes('leave.cancelled'), 'the newer event');
    expect(letters.map((l) => l.event.type)).toEqual(['leave.approved']);
    expect(runs).toEqual(['leave.approved', 'leave.approved', 'leave.approved', 'leave.cancelled']);
    // A replayed dead letter meets the same watermark: it is now stale, and skipped.
    expect(await receiver.replay(letters[0]!.event.id)).toBe(true);
    await until(() => stale.length === 1, 'the replay to be skipped');
    expect(stale).toEqual([letters[0]!.event.id]);
    expect(runs).toHaveLength(4);
    expect((await receiver.deadLetters()).items).toHaveLength(0);
    await receiver.close();
  });

  it('lets newer events go after maxWaitMs, before the failing one is dead-lettered; it is then stale', async () => {
    const letters: DeadLetter[] = [];
    const stale: string[] = [];
    const runs: string[] = [];
    const receiver = make({
      queue: createMemoryQueue({ backoff: () => 300, attempts: 3 }),
      ordering: { maxWaitMs: 50 },
      onDeadLetter: (letter) => void letters.push(letter),
      onStale: (event) => void stale.push(event.type),
    });
    receiver.on('leave.*', async (event) => {
      runs.push(event.type);
      if (event.type === 'leave.approved') throw new Error('always');
    });
    await receiver.handle(await leave('leave.approved', 1));
    await until(() => runs.length > 0, 'the first run');
    await receiver.handle(await leave('leave.cancelled', 2));
    await until(() => stale.length === 1, 'the failing event to become stale');
    expect(runs).toEqual(['leave.approved', 'leave.cancelled']);
    expect(stale).toEqual(['leave.approved']);
    expect(letters).toEqual([]);
    await receiver.close();
  });
});

describe('waiting for a busy key', () => {
  const ordered = async (key: string) => {
    const { event } = await createSignedDelivery({
      secret,
      type: 'leave.approved',
      data: { leaveRequestId: key } as never,
    });
    return { event, deliveryId: undefined };
  };
  const attempt = { attempt: 1, signal: new AbortController().signal };

  it("keeps no wake-up for a durable queue's event, which may run next on another instance", async () => {
    const store = createMemoryStore();
    const ordering = createOrdering({
      store: store.ordering,
      shared: false,
      leaseMs: 30_000,
      doneTtlMs: 60_000,
      logger: recordingLogger(),
      onStale: undefined,
    });
    const key = crypto.randomUUID();
    await store.ordering!.enter(key, 'an event on another instance', 30_000);
    const run = async () => {};

    const durable = await ordering
      .wrap(run, 'durable')(await ordered(key), attempt)
      .catch((error) => error);
    expect(durable).toBeInstanceOf(OrderingWait);
    expect((durable as OrderingWait).retryInMs).toBeLessThanOrEqual(200);
    // Nothing is kept for it: had the event run elsewhere, a gate made here would wait forever for a wake.
    expect(ordering.waitedKeys).toBe(0);

    // A queue in this process waits for this process's wake-up: the gate is made at once, and goes with the wake.
    const local = await ordering
      .wrap(run, 'local')(await ordered(key), attempt)
      .catch((error) => error);
    expect(local).toBeInstanceOf(OrderingWait);
    expect(ordering.waitedKeys).toBe(1);
    await ordering.deadLettered({
      event: (await ordered(key)).event,
      deliveryId: undefined,
      attempts: 1,
      error: new Error('x'),
      failedAt: Date.now(),
    });
    expect(ordering.waitedKeys).toBe(0);
    await (local as OrderingWait).ready;
  });

  for (const fails of [false, true])
    it(`keeps the key given up when a renewal lands after the run ${fails ? 'held' : 'left'} it (a pool ran them out of order)`, async () => {
      const memory = createMemoryStore().ordering!;
      // Renewals held back, as a pool's connection may hold one while another runs the run's leave or hold.
      const late: (() => void)[] = [];
      const renewed: boolean[] = [];
      let holdBack = false;
      const store: OrderingStore = {
        enter: (key, owner, leaseMs, run) =>
          holdBack
            ? new Promise<KeyEntry>((resolve) =>
                late.push(() => resolve(memory.enter(key, owner, leaseMs, run))),
              )
            : memory.enter(key, owner, leaseMs, run),
        renew: (key, owner, run, leaseMs) => {
          const renew = (): boolean => {
            const answer = memory.renew(key, owner, run, leaseMs) as boolean;
            renewed.push(answer);
            return answer;
          };
          return holdBack ? new Promise<boolean>((resolve) => late.push(() => resolve(renew()))) : renew();
        },
        hold: (key, owner, maxWaitMs, run) => memory.hold(key, owner, maxWaitMs, run),
        leave: (key, owner, mark, ttlMs, run) => memory.leave(key, owner, mark, ttlMs, run),
        watermark: (key) => memory.watermark(key),
      };
      // Renewals every 300 ms; a failing event holds its key for a minute.
      const ordering = createOrdering({
        store,
        shared: false,
        leaseMs: 900,
        maxWaitMs: 60_000,
        doneTtlMs: 60_000,
        logger: recordingLogger(),
        onStale: undefined,
      });
      const key = crypto.randomUUID();
      let finish!: () => void;
      const handlers = new Promise<void>((resolve) => {
        finish = resolve;
      });
      const job = await ordered(key);
      const ran = ordering.wrap(async () => {
        await handlers;
        if (fails) throw new Error('the calendar is down');
      }, 'local')(job, attempt);
      holdBack = true;
      await until(() => late.length > 0, 'a renewal');
      finish();
      await ran.catch(() => {});
      holdBack = false;
      // The renewal lands now, after the run left (or held) the key: it must not take it back (for another 900 ms).
      renewed.length = 0;
      for (const renewal of late.splice(0)) renewal();
      await sleep(20);
      expect(renewed.length > 0 && !renewed.includes(true)).toBe(true);
      // Left: another event takes the key at once. Held: the event's retry (another run) takes it at once.
      const next = fails
        ? await memory.enter(key, job.event.id, 900, 'the retry')
        : await memory.enter(key, 'a newer event', 900);
      expect(next.status).toBe('entered');
    });

  it('looks again soon, with no wake-up kept, when the store is shared by other instances', async () => {
    const store = createMemoryStore();
    // A store other instances share (Redis, Postgres): the key may be given up on one of them.
    const ordering = createOrdering({
      store: store.ordering,
      shared: true,
      leaseMs: 30_000,
      doneTtlMs: 60_000,
      logger: recordingLogger(),
      onStale: undefined,
    });
    const key = crypto.randomUUID();
    await store.ordering!.enter(key, 'an event on another instance', 30_000);
    const local = await ordering
      .wrap(async () => {}, 'local')(await ordered(key), attempt)
      .catch((error) => error);
    expect(local).toBeInstanceOf(OrderingWait);
    expect((local as OrderingWait).retryInMs).toBeLessThanOrEqual(200);
    expect(ordering.waitedKeys).toBe(0);
    const started = Date.now();
    await (local as OrderingWait).ready;
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});

describe('100 leave requests, 1 000 deliveries shuffled and duplicated, one process', () => {
  it('ends every request in its newest state, one run per key at a time, each event run or counted stale once', async () => {
    const log: RunRecord[] = [];
    const staleCounts = new Map<string, number>();
    const finalStates = new Map<string, string>();
    const receiver = createReceiver({
      secret,
      queue: createMemoryQueue({ concurrency: 10 }),
      ordering: { key: byDefaultKeys() },
      onStale: (event) => void staleCounts.set(event.id, (staleCounts.get(event.id) ?? 0) + 1),
    });
    receiver.on('leave.*', async (event, ctx) => {
      const key = ctx.orderingKey!;
      log.push({ kind: 'start', key, eventId: event.id, state: stateOf(event) });
      await sleep(Math.random() * 50);
      finalStates.set(key, stateOf(event));
      log.push({ kind: 'end', key, eventId: event.id, state: stateOf(event) });
    });
    const app = await listen(createServer(createNodeHandler(receiver)));
    const events = leaveLifecycles(100);
    await deliverShuffled(events, [app.url], secret);
    await receiver.close({ timeoutMs: 30_000 });
    await app.close();
    checkOrdering(events, log, staleCounts, finalStates);
    expect([...staleCounts.values()].reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
  }, 60_000);
});
