// Replaying a BullMQ dead letter on Redis: once, only the failure asked for, and from its first attempt, as a new job.
import { Job, Queue } from 'bullmq';
import { type Command, Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createMemoryQueue,
  type DeadLetter,
  type EventQueue,
  HandlerFailure,
  replayDeadLetters,
  silentLogger,
} from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { queuedEvent } from '../contract/queue-suite.js';
import { redisUrl, uniqueName } from '../setup/redis-helpers.js';

const open: EventQueue[] = [];
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
  await Promise.all(open.splice(0).map((queue) => queue.close({ timeoutMs: 3000 })));
});

// Starts `queue` with handlers that always fail, recording each attempt's number and each dead letter.
function alwaysFailing(queue: EventQueue): { readonly seen: number[]; readonly dead: DeadLetter[] } {
  const seen: number[] = [];
  const dead: DeadLetter[] = [];
  queue.start({
    logger: silentLogger,
    process: async (_job, ctx) => {
      seen.push(ctx.attempt);
      throw new HandlerFailure([new TypeError('down')], []);
    },
    onDeadLetter: async (letter) => {
      dead.push(letter);
    },
  });
  return { seen, dead };
}

type Send = (this: Redis, command: Command, stream?: unknown) => unknown;

// Holds the first Redis command sent after `arm()` whose arguments carry `marker` until `release()`: one operator's
// round trip made slow, as a busy network or Redis would. A letter's delivery id is in the arguments only of the
// commands that write its data, so `marker` = its delivery id holds a replay's write after its read of the letter.
function holdCommand(marker: string) {
  const proto = Redis.prototype as unknown as { sendCommand: Send };
  const original = proto.sendCommand;
  let armed = false;
  let reach!: () => void;
  const reached = new Promise<void>((resolve) => {
    reach = resolve;
  });
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const carries = (command: Command): boolean =>
    command.args.some((arg) => typeof arg === 'string' && arg.includes(marker));
  proto.sendCommand = function (command, stream) {
    if (!armed || !carries(command)) return original.call(this, command, stream);
    armed = false;
    reach();
    void released.then(() => original.call(this, command, stream));
    return command.promise;
  };
  // A test that ends early still lets the held command go, so that its queue closes.
  cleanups.push(() => {
    proto.sendCommand = original;
    release();
  });
  return {
    arm: () => {
      armed = true;
    },
    reached,
    release,
  };
}

describe.skipIf(!redisUrl)('BullMQ on Redis: a replay racing another operator', () => {
  it('a bulk replay that listed a letter does not run it again once another replay ran it and it failed again', {
    timeout: 60_000,
  }, async () => {
    const name = uniqueName('replay-stale');
    // Every attempt fails 5 ms in, so a second failure lands at a later millisecond.
    const app = createBullmqQueue({ connection: redisUrl, name, attempts: 1 });
    const operatorA = createBullmqQueue({ connection: redisUrl, name });
    const operatorB = createBullmqQueue({ connection: redisUrl, name });
    open.push(app, operatorA, operatorB);
    const runs: string[] = [];
    app.start({
      logger: silentLogger,
      process: async (job) => {
        runs.push(job.event.id);
        await new Promise((resolve) => setTimeout(resolve, 5));
        throw new HandlerFailure([new TypeError('still down')], []);
      },
      onDeadLetter: async () => {},
    });
    const deliveryId = crypto.randomUUID();
    const job = queuedEvent({ deliveryId });
    await app.enqueue(job);
    await expect.poll(async () => (await operatorA.deadLetters()).items.length, { timeout: 20_000 }).toBe(1);
    const first = (await operatorA.deadLetters()).items[0]!;

    // B lists the letter (failure T1) and reads it; its write is slow.
    const hold = holdCommand(deliveryId);
    hold.arm();
    const bulkB = replayDeadLetters(operatorB, {});
    await hold.reached;

    // Meanwhile A replays it, and it fails again: a newer failure, T2.
    expect(await operatorA.replay(job.event.id, { failedAt: first.failedAt })).toBe(true);
    await expect
      .poll(async () => (await operatorA.deadLetters()).items[0]?.failedAt ?? 0, { timeout: 20_000 })
      .toBeGreaterThan(first.failedAt);
    expect(runs).toHaveLength(2);

    hold.release();
    // B listed T1, which was replayed since: the newer failure is not the letter it asked for.
    expect(await bulkB).toEqual({ replayed: 0, failed: 0 });
    // A job queued by mistake would run within this time.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(runs).toHaveLength(2);
    expect((await operatorA.deadLetters()).items[0]?.failedAt).toBeGreaterThan(first.failedAt);
  });

  it('a replay that loses to another answers false and leaves the winner its handlers that succeeded', {
    timeout: 60_000,
  }, async () => {
    const name = uniqueName('replay-loser');
    const app = createBullmqQueue({ connection: redisUrl, name, attempts: 2, backoff: () => 2000 });
    const operatorA = createBullmqQueue({ connection: redisUrl, name });
    const operatorB = createBullmqQueue({ connection: redisUrl, name });
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
    const deliveryId = crypto.randomUUID();
    const job = queuedEvent({ deliveryId });
    await app.enqueue(job);
    await expect.poll(async () => (await operatorA.deadLetters()).items.length, { timeout: 20_000 }).toBe(1);
    fixed = true;
    firstHandlerRuns = 0;

    // B reads the letter; its write is slow.
    const hold = holdCommand(deliveryId);
    hold.arm();
    const replayB = operatorB.replay(job.event.id);
    await hold.reached;
    // A replays it: attempt 1 runs the first handler, the second fails, and the job waits 2 s for attempt 2 with
    // the first handler kept on it as done.
    expect(await operatorA.replay(job.event.id)).toBe(true);
    await expect.poll(() => attemptsOfReplay, { timeout: 10_000 }).toEqual([1]);
    const inspector = new Queue(name, { connection: { url: redisUrl } });
    cleanups.push(() => inspector.close());
    await expect
      .poll(async () => (await Job.fromId(inspector, job.event.id))?.data.completed, { timeout: 5000 })
      .toEqual([0]);

    hold.release();
    expect(await replayB).toBe(false);
    await expect.poll(() => attemptsOfReplay, { timeout: 10_000 }).toEqual([1, 2]);
    // Attempt 2 skipped the first handler: it ran once in the replay.
    expect(firstHandlerRuns).toBe(1);
  });
});

const ATTEMPTS = 4;
const queues: Array<[string, boolean, () => EventQueue]> = [
  // The baseline: the memory queue already runs a replay through every attempt.
  ['memory', false, () => createMemoryQueue({ attempts: ATTEMPTS, backoff: () => 1 })],
  [
    'BullMQ on Redis',
    !redisUrl,
    () =>
      createBullmqQueue({
        connection: redisUrl,
        name: uniqueName('replay-attempts'),
        attempts: ATTEMPTS,
        backoff: () => 1,
      }),
  ],
];

describe.each(queues)('%s: replaying a letter an inline run handed over', (_label, skip, make) => {
  it.skipIf(skip)('runs it from attempt 1 through every one of `attempts`', { timeout: 60_000 }, async () => {
    const queue = make();
    open.push(queue);
    const { seen, dead } = alwaysFailing(queue);
    // An inline run made 3 attempts before handing the event over, so the queue had one left.
    const job = queuedEvent({ attemptsMade: 3 });
    await queue.enqueue(job);
    await expect.poll(() => dead.length, { timeout: 20_000 }).toBe(1);
    expect(seen).toEqual([4]);
    await expect.poll(async () => (await queue.deadLetters()).items.length, { timeout: 10_000 }).toBe(1);

    expect(await queue.replay(job.event.id)).toBe(true);
    await expect.poll(() => dead.length, { timeout: 20_000 }).toBe(2);
    expect(seen.slice(1)).toEqual([1, 2, 3, 4]);
    expect(dead[1]!.attempts).toBe(ATTEMPTS);
  });

  it.skipIf(skip)(
    'runs one handed over with no attempt left through every one of `attempts`',
    {
      timeout: 60_000,
    },
    async () => {
      const queue = make();
      open.push(queue);
      const { seen, dead } = alwaysFailing(queue);
      // An inline run made the last attempt before handing the event over: a dead letter at once, never run here.
      const job = queuedEvent({ attemptsMade: ATTEMPTS });
      await queue.enqueue(job, new HandlerFailure([new TypeError('down')], []));
      await expect.poll(() => dead.length, { timeout: 20_000 }).toBe(1);
      expect(seen).toEqual([]);
      expect(dead[0]!.attempts).toBe(ATTEMPTS);
      await expect.poll(async () => (await queue.deadLetters()).items.length, { timeout: 10_000 }).toBe(1);

      expect(await queue.replay(job.event.id)).toBe(true);
      await expect.poll(() => dead.length, { timeout: 20_000 }).toBe(2);
      expect(seen).toEqual([1, 2, 3, 4]);
      expect(dead[1]!.attempts).toBe(ATTEMPTS);
    },
  );
});

describe.skipIf(!redisUrl)(
  'BullMQ on Redis: a letter replayed by another queue (the dead-letters command)',
  () => {
    it("gets the attempts the app gave it, not the replaying queue's", { timeout: 60_000 }, async () => {
      const name = uniqueName('replay-operator');
      const app = createBullmqQueue({ connection: redisUrl, name, attempts: 2, backoff: () => 1 });
      // The dead-letters command's queue: the app's name, its own options (attempts 5 by default).
      const operator = createBullmqQueue({ connection: redisUrl, name });
      open.push(app, operator);
      const { seen, dead } = alwaysFailing(app);
      const job = queuedEvent({ attemptsMade: 1 });
      await app.enqueue(job);
      await expect.poll(() => dead.length, { timeout: 20_000 }).toBe(1);
      await expect.poll(async () => (await operator.deadLetters()).items.length, { timeout: 10_000 }).toBe(1);

      expect(await operator.replay(job.event.id)).toBe(true);
      await expect.poll(() => dead.length, { timeout: 20_000 }).toBe(2);
      expect(seen).toEqual([2, 1, 2]);
      expect(dead[1]!.attempts).toBe(2);
    });
  },
);

describe.skipIf(!redisUrl)('BullMQ on Redis: a replayed letter that had stalled', () => {
  it('is taken over after a stall, as a new job would be, not failed as stalled too often', {
    timeout: 90_000,
  }, async () => {
    const admin = new Redis(redisUrl);
    cleanups.push(() => admin.quit());
    const name = uniqueName('replay-stall');
    // maxStalledCount 1 (the default): one takeover is allowed per life of the job.
    const queue = createBullmqQueue({
      connection: redisUrl,
      name,
      attempts: 1,
      lockDurationMs: 3000,
      stalledIntervalMs: 300,
    });
    open.push(queue);
    // Per run of the event: 'stall' hangs until its lock is lost (its instance "dies"), 'fail' throws, 'ok' succeeds.
    const plan = ['stall', 'fail', 'stall', 'ok'];
    let runs = 0;
    const dead: DeadLetter[] = [];
    let stalling: (() => void) | undefined;
    queue.start({
      logger: silentLogger,
      process: async (_job, ctx) => {
        const step = plan[runs++];
        if (step === 'fail') throw new HandlerFailure([new TypeError('down')], []);
        if (step === 'stall') {
          stalling?.();
          await new Promise((_resolve, reject) =>
            ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)),
          );
        }
      },
      onDeadLetter: async (letter) => {
        dead.push(letter);
      },
    });
    const job = queuedEvent();
    const lockKey = `bull:${name}:${job.event.id}:lock`;
    // Waits for the next 'stall' run, then makes its lock lapse: what a dead instance looks like to the stalled check.
    const stallNext = async (): Promise<void> => {
      await new Promise<void>((resolve) => {
        stalling = resolve;
      });
      stalling = undefined;
      await expect.poll(() => admin.exists(lockKey), { timeout: 5000 }).toBe(1);
      await admin.del(lockKey);
    };

    // First life: run 1 stalls and is taken over, run 2 fails: a dead letter.
    const firstStall = stallNext();
    await queue.enqueue(job);
    await firstStall;
    await expect.poll(() => dead.length, { timeout: 30_000 }).toBe(1);
    expect(runs).toBe(2);
    await expect.poll(async () => (await queue.deadLetters()).items.length, { timeout: 10_000 }).toBe(1);

    // Replayed: run 3 stalls, and the takeover a new job is allowed runs it (run 4), which succeeds.
    const secondStall = stallNext();
    expect(await queue.replay(job.event.id)).toBe(true);
    await secondStall;
    await expect.poll(() => runs === 4 || dead.length === 2, { timeout: 30_000 }).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect({ runs, dead: dead.length }).toEqual({ runs: 4, dead: 1 });
  });
});

describe.skipIf(!redisUrl)('BullMQ on Redis: replay after close', () => {
  it('rejects with shutting_down and leaves the dead letter where it was', { timeout: 30_000 }, async () => {
    const name = uniqueName('replay-closed');
    const app = createBullmqQueue({ connection: redisUrl, name, attempts: 1 });
    const operator = createBullmqQueue({ connection: redisUrl, name });
    open.push(app);
    app.start({
      logger: silentLogger,
      process: async () => {
        throw new HandlerFailure([new TypeError('down')], []);
      },
      onDeadLetter: async () => {},
    });
    const job = queuedEvent();
    await app.enqueue(job);
    await expect.poll(async () => (await operator.deadLetters()).items.length, { timeout: 20_000 }).toBe(1);
    await operator.close({ timeoutMs: 3000 });

    await expect(operator.replay(job.event.id)).rejects.toMatchObject({ code: 'shutting_down' });
    const inspector = new Queue(name, { connection: { url: redisUrl } });
    cleanups.push(() => inspector.close());
    expect(await inspector.getJobState(job.event.id)).toBe('failed');
  });
});
