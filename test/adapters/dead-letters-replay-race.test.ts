// Replays of one BullMQ dead letter on Redis racing between their reset and BullMQ's retry: the letter runs once.
import { Queue } from 'bullmq';
import { type Command, Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { type EventQueue, HandlerFailure, silentLogger } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { REPLAY_CLAIM_FIELD } from '../../adapters/bullmq-replay.js';
import { queuedEvent } from '../contract/queue-suite.js';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';

const open: EventQueue[] = [];
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
  await Promise.all(open.splice(0).map((queue) => queue.close({ timeoutMs: 3000 })));
});

type Send = (this: Redis, command: Command, stream?: unknown) => unknown;

// Holds the first Redis command after `arm()` that `matches` until `release()`: one operator's round trip made slow,
// as a busy network, a paused process or a loaded Redis would.
function holdCommand(matches: (args: readonly unknown[]) => boolean) {
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
  proto.sendCommand = function (command, stream) {
    if (!armed || !matches(command.args)) return original.call(this, command, stream);
    armed = false;
    reach();
    void released.then(() => original.call(this, command, stream));
    return command.promise;
  };
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

// BullMQ's retry of a failed job is the only command whose arguments name both the job and its `failedReason` field.
const retryOf =
  (jobId: string) =>
  (args: readonly unknown[]): boolean =>
    args.includes(jobId) && args.includes('failedReason');

describe.skipIf(!redisUrl)('BullMQ on Redis: replays of one letter racing between reset and retry', () => {
  it('runs the letter once when one replay is slow between its reset and its retry and the other runs it and it fails again', {
    timeout: 60_000,
  }, async () => {
    const name = uniqueName('replay-window');
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
    const job = queuedEvent();
    await app.enqueue(job);
    await expect.poll(async () => (await operatorA.deadLetters()).items.length, { timeout: 20_000 }).toBe(1);
    const first = (await operatorA.deadLetters()).items[0]!;

    // B resets the letter it listed; its retry, the next round trip, is slow.
    const hold = holdCommand(retryOf(job.event.id));
    hold.arm();
    const replayB = operatorB.replay(job.event.id, { failedAt: first.failedAt });
    await hold.reached;

    // A replays the same letter meanwhile. Were it to run, it fails again: a newer failure, not the one B listed.
    const replayedByA = await operatorA.replay(job.event.id, { failedAt: first.failedAt });
    if (replayedByA)
      await expect
        .poll(async () => (await operatorA.deadLetters()).items[0]?.failedAt ?? 0, { timeout: 20_000 })
        .toBeGreaterThan(first.failedAt);

    hold.release();
    const replayedByB = await replayB;
    // One of the two replays ran it; the other answered false.
    expect([replayedByA, replayedByB].filter(Boolean)).toHaveLength(1);
    await expect.poll(() => runs.length, { timeout: 20_000 }).toBe(2);
    await expect
      .poll(async () => (await operatorA.deadLetters()).items[0]?.failedAt ?? 0, { timeout: 20_000 })
      .toBeGreaterThan(first.failedAt);
    // A job queued again by mistake would run within this time.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(runs).toHaveLength(2);
    expect((await operatorA.counts?.())?.deadLetters).toBe(1);
  });

  it('replays a letter whose earlier replay reset it but never reached the retry, once that replay is long past', {
    timeout: 60_000,
  }, async () => {
    const name = uniqueName('replay-stranded');
    const app = createBullmqQueue({ connection: redisUrl, name, attempts: 1 });
    const operator = createBullmqQueue({ connection: redisUrl, name });
    open.push(app, operator);
    const runs: string[] = [];
    app.start({
      logger: silentLogger,
      process: async (job) => {
        runs.push(job.event.id);
        throw new HandlerFailure([new TypeError('down')], []);
      },
      onDeadLetter: async () => {},
    });
    const job = queuedEvent();
    await app.enqueue(job);
    await expect.poll(async () => (await operator.deadLetters()).items.length, { timeout: 20_000 }).toBe(1);
    const letter = (await operator.deadLetters()).items[0]!;

    // A replay whose process died (or whose Redis connection dropped) between its reset and its retry.
    const stranded = createBullmqQueue({ connection: redisUrl, name });
    open.push(stranded);
    const hold = holdCommand(retryOf(job.event.id));
    hold.arm();
    void stranded.replay(job.event.id).catch(() => {});
    await hold.reached;
    const inspector = new Queue(name, { connection: { url: redisUrl } });
    cleanups.push(() => inspector.close());
    const client = connectRedis();
    const jobKey = inspector.toKey(job.event.id);
    // Still a dead letter, listed with its failure, while the stranded replay holds it: others are told it is taken.
    expect((await operator.deadLetters()).items.map((each) => each.failedAt)).toEqual([letter.failedAt]);
    expect(await operator.replay(job.event.id)).toBe(false);

    // That replay's time has passed (its call ended long ago): the letter is free to replay again.
    const [score] = String(await client.hget(jobKey, REPLAY_CLAIM_FIELD)).split(':');
    await client.hset(jobKey, REPLAY_CLAIM_FIELD, `${score}:0`);
    expect(await operator.replay(job.event.id, { failedAt: letter.failedAt })).toBe(true);
    await expect.poll(() => runs.length, { timeout: 20_000 }).toBe(2);
  });

  it('replays at once a letter whose earlier replay was refused its retry, the letter still failed', {
    timeout: 60_000,
  }, async () => {
    const name = uniqueName('replay-refused');
    const app = createBullmqQueue({ connection: redisUrl, name, attempts: 1 });
    const operator = createBullmqQueue({ connection: redisUrl, name });
    open.push(app, operator);
    const runs: string[] = [];
    app.start({
      logger: silentLogger,
      process: async (job) => {
        runs.push(job.event.id);
        throw new HandlerFailure([new TypeError('down')], []);
      },
      onDeadLetter: async () => {},
    });
    const job = queuedEvent();
    await app.enqueue(job);
    await expect.poll(async () => (await operator.deadLetters()).items.length, { timeout: 20_000 }).toBe(1);

    // Redis answers the retry with an error (the connection stays up): the replay rejects, the letter stays.
    const proto = Redis.prototype as unknown as { sendCommand: Send };
    const original = proto.sendCommand;
    let refused = false;
    proto.sendCommand = function (command, stream) {
      if (refused || !retryOf(job.event.id)(command.args)) return original.call(this, command, stream);
      refused = true;
      command.reject(new Error('ERR the retry was refused'));
      return command.promise;
    };
    cleanups.push(() => {
      proto.sendCommand = original;
    });
    await expect(operator.replay(job.event.id)).rejects.toThrow(/refused/);
    expect(refused).toBe(true);
    expect((await operator.deadLetters()).items.map((letter) => letter.event.id)).toEqual([job.event.id]);

    // Asked again, it runs: the refused replay gave its claim back.
    expect(await operator.replay(job.event.id)).toBe(true);
    await expect.poll(() => runs.length, { timeout: 20_000 }).toBe(2);
  });
});
