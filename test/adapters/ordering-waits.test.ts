// Ordering (spec rule 4) and the waits around a key: handlers that outlive their attempt (their retry here, or on
// another instance), inline runs that wait in place, and a key given up on another instance.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createMemoryQueue, createReceiver, type EventQueue, type WorkforceEvent } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createRedisStore } from 'workforce-webhooks/redis';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';
import { signedLeave, until } from '../support/ordering-scenario.js';

const secret = 'whsec_ordering_timeout';

const delivery = (type: string, second: number, key: string) => signedLeave(secret, type, second, key);

interface Backends {
  readonly name: string;
  readonly skip: boolean;
  readonly make: (
    handlerTimeoutMs: number,
    attempts: number,
  ) => Pick<Parameters<typeof createReceiver>[0], 'store' | 'queue'>;
}

const backends: Backends[] = [
  {
    name: 'memory store × memory queue',
    skip: false,
    make: (handlerTimeoutMs, attempts) => ({
      queue: createMemoryQueue({ handlerTimeoutMs, attempts, backoff: () => 0 }),
    }),
  },
  {
    name: 'Redis store × BullMQ queue',
    skip: !redisUrl,
    make: (handlerTimeoutMs, attempts) => {
      const client = connectRedis();
      const name = uniqueName('ordering-timeout');
      const queue: EventQueue = createBullmqQueue({
        connection: client,
        name,
        handlerTimeoutMs,
        attempts,
        backoff: () => 0,
      });
      return { store: createRedisStore({ client, prefix: `${name}:` }), queue };
    },
  },
];

// A handler that ignores `ctx.signal` past `handlerTimeoutMs` keeps running while its queue retries the event. Its
// key stays its own until it settles, so no newer event of the record runs beside it, and its retry waits for it.
describe.each(backends)('a handler past its time limit, ordering on: $name', ({ skip, make }) => {
  // The older event's first attempt takes 800 ms against a 300 ms limit, ignoring its signal; `fails` says how it
  // ends. The newer event of the same record arrives while it runs. With one attempt, the older event is a dead
  // letter as soon as its limit passes, while its handler still runs.
  const scenario = async (fails: boolean, attempts = 3) => {
    const receiver = createReceiver({ secret, ...make(300, attempts), ordering: {} });
    onTestFinished(() => receiver.close());
    const key = crypto.randomUUID();
    const log: string[] = [];
    const running = new Set<string>();
    const overlaps: string[] = [];
    receiver.on('leave.*', async (event: WorkforceEvent, ctx) => {
      const who = `${event.type}#${ctx.attempt}`;
      for (const other of running) overlaps.push(`${who} started while ${other} ran`);
      running.add(who);
      log.push(`start ${who}`);
      const slow = event.type === 'leave.requested' && ctx.attempt === 1;
      await sleep(slow ? 800 : 50);
      running.delete(who);
      log.push(`end ${who}`);
      if (slow && fails) throw new Error('the calendar is down');
    });
    expect((await receiver.handle(await delivery('leave.requested', 1, key))).status).toBe(202);
    await until(() => log.length > 0, 'the first attempt');
    expect((await receiver.handle(await delivery('leave.approved', 2, key))).status).toBe(202);
    await until(() => log.includes('end leave.approved#1'), 'the newer event');
    return { log, overlaps };
  };

  it.skipIf(skip)(
    'runs the newer event only once the late handlers succeeded, and not the older again',
    async () => {
      const { log, overlaps } = await scenario(false);
      expect(overlaps).toEqual([]);
      // Its handlers all succeeded, late: the retry finds the record's watermark at its own mark, and ends there.
      expect(log.filter((line) => line.startsWith('start'))).toEqual([
        'start leave.requested#1',
        'start leave.approved#1',
      ]);
    },
  );

  for (const fails of [false, true])
    it.skipIf(skip)(
      `keeps the key of an event dead-lettered while its late handlers run, until they ${fails ? 'fail' : 'succeed'}`,
      async () => {
        const { log, overlaps } = await scenario(fails, 1);
        expect(overlaps).toEqual([]);
        expect(log.filter((line) => line.startsWith('start'))).toEqual([
          'start leave.requested#1',
          'start leave.approved#1',
        ]);
      },
    );

  it.skipIf(skip)('runs the retry once the late handlers failed, then the newer event', async () => {
    const { log, overlaps } = await scenario(true);
    expect(overlaps).toEqual([]);
    expect(log.filter((line) => line.startsWith('start'))).toEqual([
      'start leave.requested#1',
      'start leave.requested#2',
      'start leave.approved#1',
    ]);
  });
});

describe('inline mode, a key held by a failing event', () => {
  it('runs an event that waited past its time limit once: the wait ends with the attempt', async () => {
    const receiver = createReceiver({
      secret,
      mode: 'inline',
      ackDeadlineMs: 100,
      handlerTimeoutMs: 300,
      queue: createMemoryQueue({ attempts: 3, backoff: () => 10 }),
      ordering: { maxWaitMs: 800 },
    });
    onTestFinished(() => receiver.close());
    const key = crypto.randomUUID();
    const runs: string[] = [];
    const running = new Set<string>();
    const overlaps: string[] = [];
    receiver.on('leave.*', async (event, ctx) => {
      const who = `${event.type}#${ctx.attempt}`;
      runs.push(who);
      if (event.type === 'leave.requested') throw new Error('the calendar is down'); // holds the key 800 ms
      for (const other of running) overlaps.push(`${who} started while ${other} ran`);
      running.add(who);
      await sleep(100);
      running.delete(who);
    });
    expect((await receiver.handle(await delivery('leave.requested', 1, key))).status).toBe(500);
    const answer = await receiver.handle(await delivery('leave.approved', 2, key));
    expect(answer.status).toBe(202); // waited past ackDeadlineMs
    await answer.background; // its attempt reached its time limit while waiting: the queue has it now
    await until(() => runs.some((run) => run.startsWith('leave.approved')), 'the newer event');
    await sleep(500);
    expect({ approved: runs.filter((run) => run.startsWith('leave.approved')), overlaps }).toEqual({
      approved: ['leave.approved#2'],
      overlaps: [],
    });
  });

  it('runs no handler after close(): a run waiting for its key ends with the receiver', async () => {
    const receiver = createReceiver({
      secret,
      mode: 'inline',
      ackDeadlineMs: 5000,
      handlerTimeoutMs: 10_000,
      ordering: { maxWaitMs: 500 },
    });
    const key = crypto.randomUUID();
    const runs: string[] = [];
    receiver.on('leave.*', async (event) => {
      runs.push(event.type);
      if (event.type === 'leave.requested') throw new Error('fails; the key is held 500 ms');
    });
    expect((await receiver.handle(await delivery('leave.requested', 1, key))).status).toBe(500);
    const waiting = receiver.handle(await delivery('leave.approved', 2, key));
    await sleep(50);
    await receiver.close({ timeoutMs: 50 });
    // Not accepted: the sender sends it again.
    expect((await waiting).status).toBeGreaterThanOrEqual(500);
    await sleep(800); // past the hold
    expect(runs).toEqual(['leave.requested']);
  });
});

describe.skipIf(!redisUrl)('Redis store × memory queue, two instances', () => {
  it('runs the next event of a key soon after the other instance gave the key up', async () => {
    const prefix = `${uniqueName('ordering-shared')}:`;
    const client = connectRedis();
    const times: Record<string, number> = {};
    const make = () => {
      const receiver = createReceiver({
        secret,
        store: createRedisStore({ client, prefix }),
        queue: createMemoryQueue(),
        leaseMs: 5000,
        ordering: {},
      });
      receiver.on('leave.*', async (event) => {
        times[`start ${event.type}`] = Date.now();
        await sleep(event.type === 'leave.requested' ? 300 : 1);
        times[`end ${event.type}`] = Date.now();
      });
      onTestFinished(() => receiver.close());
      return receiver;
    };
    const [first, second] = [make(), make()];
    const key = crypto.randomUUID();
    expect((await first.handle(await delivery('leave.requested', 1, key))).status).toBe(202);
    await until(() => times['start leave.requested'] !== undefined, 'the first event');
    expect((await second.handle(await delivery('leave.approved', 2, key))).status).toBe(202);
    await until(() => times['end leave.approved'] !== undefined, 'the second event');
    // It looks again every 100-200 ms, as a BullMQ event does, instead of sleeping out the holder's lease (5 s).
    expect(times['start leave.approved']! - times['end leave.requested']!).toBeLessThan(2_000);
  });
});

// Spec rule 4 across instances, with a handler past its time limit: its attempt on `a` fails by the limit while the
// handler runs on, and the event's retry is taken by `b`. Each run holds the key as its own, so the retry waits for
// the late handler, and the late handler, settling, does not give up the retry's lease to a newer event.
describe.skipIf(!redisUrl)(
  'Redis store × BullMQ queue, a handler past its time limit, its retry on another instance',
  () => {
    interface Run {
      readonly who: string;
      readonly instance: string;
      readonly start: number;
      end?: number;
    }

    // The older event's first attempt takes 1 600 ms against a 1 000 ms limit, ignoring its signal; `fails` says how
    // it ends. `a` takes no more jobs once that attempt ends (its worker closes), so `b` takes the retry; the newer
    // event of the record arrives at `b` while the late handler runs.
    const scenario = async (fails: boolean) => {
      const client = connectRedis();
      const name = uniqueName('ordering-runs');
      const runs: Run[] = [];
      const make = (instance: string) => {
        const receiver = createReceiver({
          secret,
          store: createRedisStore({ client, prefix: `${name}:` }),
          queue: createBullmqQueue({
            connection: client,
            name,
            handlerTimeoutMs: 1000,
            attempts: 3,
            backoff: () => 0,
          }),
          ordering: {},
        });
        receiver.on('leave.*', async (event: WorkforceEvent, ctx) => {
          const run: Run = { who: `${event.type}#${ctx.attempt}`, instance, start: Date.now() };
          runs.push(run);
          const late = event.type === 'leave.requested' && ctx.attempt === 1;
          await sleep(late ? 1600 : 300); // `ctx.signal` ignored
          run.end = Date.now();
          if (late && fails) throw new Error('the calendar is down');
        });
        onTestFinished(() => receiver.close());
        return receiver;
      };
      const a = make('a');
      const key = crypto.randomUUID();
      expect((await a.handle(await delivery('leave.requested', 1, key))).status).toBe(202);
      await until(() => runs.length > 0, 'the first attempt');
      const b = make('b');
      const aClosed = a.close();
      expect((await b.handle(await delivery('leave.approved', 2, key))).status).toBe(202);
      await until(
        () => runs.some((run) => run.who === 'leave.approved#1' && run.end !== undefined),
        'the newer event',
      );
      await aClosed;
      await sleep(300); // a retry that would still start
      const overlaps = runs.flatMap((x, i) =>
        runs
          .slice(i + 1)
          .filter(
            (y) =>
              x.start < (y.end ?? Number.POSITIVE_INFINITY) && y.start < (x.end ?? Number.POSITIVE_INFINITY),
          )
          .map((y) => `${y.who} on ${y.instance} ran beside ${x.who} on ${x.instance}`),
      );
      return { runs, overlaps };
    };

    it('runs the retry on the other instance only once the late handler failed, then the newer event', {
      timeout: 30_000,
    }, async () => {
      const { runs, overlaps } = await scenario(true);
      expect(overlaps).toEqual([]);
      expect(runs.map((run) => `${run.who} on ${run.instance}`)).toEqual([
        'leave.requested#1 on a',
        'leave.requested#2 on b',
        'leave.approved#1 on b',
      ]);
      expect(runs[1]!.start).toBeGreaterThanOrEqual(runs[0]!.end!);
    });

    it('runs no retry beside the late handler, nor the newer event once it succeeded', {
      timeout: 30_000,
    }, async () => {
      const { runs, overlaps } = await scenario(false);
      expect(overlaps).toEqual([]);
      // Its handlers all succeeded, late: the retry finds the record's watermark at its own mark (or the newer one
      // past it), and ends there.
      expect(runs.map((run) => `${run.who} on ${run.instance}`)).toEqual([
        'leave.requested#1 on a',
        'leave.approved#1 on b',
      ]);
    });
  },
);
