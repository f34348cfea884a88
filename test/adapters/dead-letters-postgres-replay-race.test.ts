// Replays of one BullMQ dead letter on the Postgres backend racing: the one that loses writes nothing over the run of
// the one that won.
import { createPostgresBackend } from 'bullmq';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { type EventQueue, HandlerFailure, silentLogger } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { queuedEvent } from '../contract/queue-suite.js';
import { connectPostgres, postgresUrl } from '../setup/postgres-helpers.js';
import { uniqueName } from '../setup/redis-helpers.js';

const open: EventQueue[] = [];
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
  await Promise.all(open.splice(0).map((queue) => queue.close({ timeoutMs: 5000 })));
});

type Query = (this: pg.Client, ...args: unknown[]) => unknown;

// Holds the first statement sent to PostgreSQL after `arm()` whose text holds `marker` until `release()`: one
// operator's round trip made slow, as a busy network or database would. `seen` lists the third parameter (a data
// write's data) of every such statement sent, in order.
function holdQuery(marker: string) {
  const proto = pg.Client.prototype as unknown as { query: Query };
  const original = proto.query;
  let armed = false;
  const seen: string[] = [];
  let reach!: () => void;
  const reached = new Promise<void>((resolve) => {
    reach = resolve;
  });
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  proto.query = function (...args) {
    const [text, params] = args as [unknown, unknown];
    if (typeof text !== 'string' || !text.includes(marker)) return original.apply(this, args);
    if (Array.isArray(params)) seen.push(String(params[2]));
    if (!armed) return original.apply(this, args);
    armed = false;
    reach();
    return released.then(() => original.apply(this, args));
  };
  cleanups.push(() => {
    proto.query = original;
    release();
  });
  return {
    arm: () => {
      armed = true;
    },
    reached,
    release,
    seen,
  };
}

// True once a statement waits for the row lock of a letter that a replay or a discard holds.
async function waitsForLetterLock(): Promise<boolean> {
  const { rows } = await observer().query(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock'
       AND query LIKE '%FROM job WHERE queue = $1 AND id = $2 FOR UPDATE%'`,
  );
  return rows[0].n > 0;
}
let observing: pg.Pool | undefined;
const observer = (): pg.Pool => {
  observing ??= connectPostgres();
  return observing;
};

const make = (name: string, extra: Record<string, unknown> = {}) =>
  createBullmqQueue({
    backend: createPostgresBackend,
    connection: { connectionString: postgresUrl, migrate: true, max: 4 },
    name,
    ...extra,
  });

describe.skipIf(!postgresUrl)('BullMQ on Postgres: a replay racing another operator', () => {
  it('a replay that loses to another answers false and leaves the winner its handlers that succeeded', {
    timeout: 90_000,
  }, async () => {
    const name = uniqueName('pg-replay-loser');
    const app = make(name, { attempts: 2, backoff: () => 2000 });
    const operatorA = make(name);
    const operatorB = make(name);
    open.push(app, operatorA, operatorB);
    let fixed = false;
    let firstHandlerRuns = 0;
    const attemptsOfReplay: number[] = [];
    app.start({
      logger: silentLogger,
      // Two handlers: the first always succeeds; the second fails until fixed, and then once more, on the replay's
      // first attempt, so that the replay has a success to keep.
      process: async (job, ctx) => {
        if (fixed) attemptsOfReplay.push(ctx.attempt);
        if (!(job.completed ?? []).includes(0)) firstHandlerRuns++;
        if (!fixed || ctx.attempt === 1)
          throw new HandlerFailure([new TypeError('second handler down')], [0]);
      },
      onDeadLetter: async () => {},
    });
    const job = queuedEvent();
    await app.enqueue(job);
    await expect.poll(async () => (await operatorA.deadLetters()).items.length, { timeout: 30_000 }).toBe(1);
    fixed = true;
    firstHandlerRuns = 0;

    // B reads the letter; its write is slow.
    const hold = holdQuery('UPDATE job SET data');
    hold.arm();
    const replayB = operatorB.replay(job.event.id);
    await hold.reached;
    // A replays it meanwhile. Let it go as far as it can: either it waits for B (the letter's row is B's until B is
    // done), or it runs attempt 1, where the first handler succeeds and the second fails, and the job waits 2 s for
    // attempt 2 with the first handler kept on it as done.
    let answeredA: boolean | undefined;
    const replayA = operatorA.replay(job.event.id).then((replayed) => {
      answeredA = replayed;
      return replayed;
    });
    await expect
      .poll(async () => answeredA !== undefined || (await waitsForLetterLock()), { timeout: 20_000 })
      .toBe(true);
    if (answeredA === true) {
      await expect.poll(() => attemptsOfReplay, { timeout: 20_000 }).toEqual([1]);
      await expect
        .poll(() => hold.seen.some((data) => data.includes('"completed":[0]')), { timeout: 10_000 })
        .toBe(true);
    }

    hold.release();
    // One of the two replays ran it; the other answered false.
    expect([await replayA, await replayB].filter(Boolean)).toHaveLength(1);
    await expect.poll(() => attemptsOfReplay, { timeout: 20_000 }).toEqual([1, 2]);
    // Attempt 2 skipped the first handler: it ran once in the replay.
    expect(firstHandlerRuns).toBe(1);
  });

  it('a discard that listed a failure leaves the letter that another operator replayed meanwhile and that failed again', {
    timeout: 90_000,
  }, async () => {
    const name = uniqueName('pg-discard-race');
    const app = make(name, { attempts: 1 });
    const operatorA = make(name);
    const operatorB = make(name);
    open.push(app, operatorA, operatorB);
    let runs = 0;
    app.start({
      logger: silentLogger,
      process: async () => {
        runs++;
        throw new HandlerFailure([new TypeError('still down')], []);
      },
      onDeadLetter: async () => {},
    });
    const job = queuedEvent();
    await app.enqueue(job);
    await expect.poll(async () => (await operatorA.deadLetters()).items.length, { timeout: 30_000 }).toBe(1);
    const first = (await operatorA.deadLetters()).items[0]!;

    // B discards the failure it listed; its removal is slow.
    const hold = holdQuery('remove(');
    hold.arm();
    const discardB = operatorB.discard(job.event.id, { failedAt: first.failedAt });
    await hold.reached;
    // A replays that failure meanwhile: either it waits for B, or it runs the letter, which fails again.
    let answeredA: boolean | undefined;
    const replayA = operatorA.replay(job.event.id, { failedAt: first.failedAt }).then((replayed) => {
      answeredA = replayed;
      return replayed;
    });
    await expect
      .poll(async () => answeredA !== undefined || (await waitsForLetterLock()), { timeout: 20_000 })
      .toBe(true);
    if (answeredA === true)
      await expect
        .poll(async () => (await operatorA.deadLetters()).items[0]?.failedAt ?? 0, { timeout: 20_000 })
        .toBeGreaterThan(first.failedAt);

    hold.release();
    const [replayed, discarded] = [await replayA, await discardB];
    // One of the two took the failure B listed; a newer failure is not what B asked to drop.
    expect([replayed, discarded].filter(Boolean)).toHaveLength(1);
    const left = (await operatorA.deadLetters()).items;
    if (replayed) {
      expect(runs).toBe(2);
      expect(left.map((letter) => letter.event.id)).toEqual([job.event.id]);
      expect(left[0]!.failedAt).toBeGreaterThan(first.failedAt);
    } else {
      expect(runs).toBe(1);
      expect(left).toEqual([]);
    }
  });
});
