// The real `dead-letters` command, as a child process, on a BullMQ queue of 5 000 dead letters in a real redis-server.
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EventQueue, HandlerFailure, silentLogger } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { queuedEvent } from '../contract/queue-suite.js';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';
import { hasRedisServer } from '../setup/redis-server.js';
import { runCliProcess } from './cli-process.js';

const LETTERS = 5000;
// Three in five are leave.* (two kinds), the rest employee.updated.
const typeOf = (i: number): string =>
  i % 5 < 2 ? 'leave.approved' : i % 5 === 2 ? 'leave.cancelled' : 'employee.updated';
const isLeave = (type: string): boolean => type.startsWith('leave.');

/** Runs `dead-letters` to its end, standard input closed (not a terminal), as a script or a CI job runs it. */
const cli = (args: readonly string[]) => runCliProcess(['dead-letters', ...args]);

// The table's rows: every line of the output but the header and the closing line.
const rowsOf = (out: string): string[][] =>
  out
    .trim()
    .split('\n')
    .slice(1, -1)
    .map((line) => line.split(/\s{2,}/));

describe.skipIf(!redisUrl || !hasRedisServer())('workforce-webhooks dead-letters', () => {
  const name = uniqueName('cli-dead');
  const base = ['--redis', redisUrl, '--queue', name];
  const typeById = new Map<string, string>();
  // Runs per event id once the handlers succeed: what a replay made the deployed workers run.
  const runs = new Map<string, number>();
  let failing = true;
  let worker: EventQueue;
  let admin: Redis;

  beforeAll(async () => {
    admin = connectRedis();
    // The deployed app: its workers fail every event once (attempts 1), then, once fixed, run what is replayed.
    worker = createBullmqQueue({ connection: redisUrl, name, attempts: 1, concurrency: 100 });
    worker.start({
      logger: silentLogger,
      process: async (job) => {
        if (failing) throw new HandlerFailure([new TypeError('the payroll API is down')], []);
        runs.set(job.event.id, (runs.get(job.event.id) ?? 0) + 1);
      },
      onDeadLetter: async () => {},
    });
    for (let sent = 0; sent < LETTERS; sent += 500) {
      const jobs = Array.from({ length: 500 }, (_, i) => queuedEvent({}, typeOf(sent + i)));
      for (const job of jobs) typeById.set(job.event.id, job.event.type);
      await Promise.all(jobs.map((job) => worker.enqueue(job)));
    }
    // Not expect.poll: it is for tests, and this is their set-up.
    const deadline = Date.now() + 240_000;
    while ((await admin.zcard(`bull:${name}:failed`)) < LETTERS) {
      if (Date.now() > deadline) throw new Error('the dead letters were not all recorded in time');
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    failing = false;
  }, 300_000);

  afterAll(async () => {
    await worker?.close({ timeoutMs: 5000 });
  });

  it('lists a page at a time as a table, newest first, each page going on from the last', {
    timeout: 120_000,
  }, async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const { code, out, err } = await cli([
        'list',
        ...base,
        '--limit',
        '1000',
        ...(cursor ? ['--cursor', cursor] : []),
      ]);
      expect(err).toBe('');
      expect(code).toBe(0);
      const [header] = out.split('\n');
      expect(header!.split(/\s{2,}/)).toEqual(['id', 'type', 'occurredAt', 'attempts', 'error', 'failed at']);
      const rows = rowsOf(out);
      expect(rows).toHaveLength(1000);
      for (const [id, type, occurredAt, attempts, error, failedAt] of rows) {
        expect(typeById.get(id!)).toBe(type);
        expect(occurredAt).toBe('2026-10-15T09:00:00.000Z');
        expect([attempts, error]).toEqual(['1', 'TypeError']);
        expect(new Date(failedAt!).toISOString()).toBe(failedAt);
      }
      const times = rows.map((row) => Date.parse(row[5]!));
      expect(times).toEqual([...times].sort((a, b) => b - a));
      seen.push(...rows.map((row) => row[0]!));
      cursor = /next page: --cursor (\S+)/.exec(out)?.[1];
      pages++;
    } while (cursor !== undefined && pages < 10);
    expect(pages).toBe(5);
    expect(new Set(seen).size).toBe(LETTERS);

    // A filter: only leave.*, and none failed in the future.
    const leave = await cli(['list', ...base, '--type', 'leave.*', '--limit', '20']);
    expect(rowsOf(leave.out).map((row) => row[1])).toSatisfy(
      (types: string[]) => types.length === 20 && types.every(isLeave),
    );
    const future = await cli(['list', ...base, '--since', '2999-01-01T00:00:00Z']);
    expect(future.out).toMatch(/^0 shown; no more pages$/m);
    expect(await cli(['list', ...base, '--since', 'yesterday'])).toMatchObject({ code: 2 });
  });

  it('refuses to replay or discard without --yes when standard input is not a terminal', async () => {
    for (const action of ['replay', 'discard']) {
      const { code, err } = await cli([action, ...base, '--type', 'leave.*']);
      expect(code).toBe(2);
      expect(err).toMatch(/needs --yes: standard input is not a terminal/);
    }
    expect(await admin.zcard(`bull:${name}:failed`)).toBe(LETTERS);
    expect(runs.size).toBe(0);
  });

  it('replays exactly the leave.* letters, each once, with two replays at the same time', {
    timeout: 240_000,
  }, async () => {
    const leave = [...typeById].filter(([, type]) => isLeave(type)).map(([id]) => id);
    const [first, second] = await Promise.all([
      cli(['replay', ...base, '--type', 'leave.*', '--yes']),
      cli(['replay', ...base, '--type', 'leave.*', '--yes', '--concurrency', '25']),
    ]);
    const replayed = [first!, second!].map(({ code, out }) => {
      expect(code).toBe(0);
      return Number(/^replayed (\d+), failed to enqueue 0/m.exec(out)?.[1]);
    });
    expect(replayed[0]! + replayed[1]!).toBe(leave.length);
    // The progress went to standard error, a line every few seconds when it is not a terminal.
    expect(first!.err + second!.err).toMatch(/replaying/);

    await expect.poll(() => runs.size, { timeout: 120_000, interval: 250 }).toBe(leave.length);
    // Nothing left to run: every replayed job is done, so no second run can still come.
    await expect
      .poll(() => admin.llen(`bull:${name}:wait`), {
        timeout: 60_000,
      })
      .toBe(0);
    await expect.poll(() => admin.zcard(`bull:${name}:completed`), { timeout: 60_000 }).toBe(leave.length);
    expect([...runs.keys()].sort()).toEqual([...leave].sort());
    expect([...runs.values()].every((count) => count === 1)).toBe(true);
    expect(await admin.zcard(`bull:${name}:failed`)).toBe(LETTERS - leave.length);
  });

  it('discards the matches and says how many', { timeout: 120_000 }, async () => {
    const others = [...typeById.values()].filter((type) => !isLeave(type)).length;
    const { code, out } = await cli(['discard', ...base, '--type', 'employee.updated', '--yes']);
    expect(code).toBe(0);
    expect(out).toMatch(new RegExp(`^discarded ${others}$`, 'm'));
    expect(await admin.zcard(`bull:${name}:failed`)).toBe(0);
    expect(await cli(['discard', ...base, '--yes'])).toMatchObject({
      code: 0,
      out: `no dead letters of queue ${name}\n`,
    });
  });
});
