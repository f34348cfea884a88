// BullMQ on Postgres after an outage: tens of thousands of dead letters are listed page by page, each page a few
// statements however many are kept, every letter once, whether the walk is by type or not.
import { createPostgresBackend } from 'bullmq';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigurationError, type EventQueue, HandlerFailure, silentLogger } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { queuedEvent } from '../contract/queue-suite.js';
import { postgresUrl } from '../setup/postgres-helpers.js';
import { uniqueName } from '../setup/redis-helpers.js';

const LETTERS = 20_000;

describe.skipIf(!postgresUrl)('BullMQ on Postgres: listing 20 000 dead letters', () => {
  const open: EventQueue[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((queue) => queue.close({ timeoutMs: 5000 })));
  });

  // Every page of a walk, following the cursors to the end.
  async function walk(queue: EventQueue, query: { limit: number; type?: string }): Promise<string[]> {
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await queue.deadLetters({ ...query, cursor });
      expect(page.items.length).toBeLessThanOrEqual(query.limit);
      // A page is full while letters follow.
      if (page.cursor !== undefined) expect(page.items.length).toBe(query.limit);
      seen.push(...page.items.map((letter) => letter.event.id));
      cursor = page.cursor;
    } while (cursor !== undefined);
    return seen;
  }

  it('lists every letter once, newest first, each page in a few statements, by type, time or not', {
    timeout: 600_000,
  }, async () => {
    const name = uniqueName('pg-many-letters');
    const make = (extra: Record<string, unknown> = {}) =>
      createBullmqQueue({
        backend: createPostgresBackend,
        connection: { connectionString: postgresUrl, migrate: true, max: 16 },
        name,
        ...extra,
      });
    const app = make({ attempts: 1, concurrency: 200 });
    const operator = make();
    open.push(app, operator);
    let dead = 0;
    app.start({
      logger: silentLogger,
      process: async () => {
        throw new HandlerFailure([new TypeError('down')], []);
      },
      onDeadLetter: async () => {
        dead++;
      },
    });
    const ids: string[] = [];
    const shifts = new Set<string>();
    for (let sent = 0; sent < LETTERS; sent += 500) {
      const jobs = Array.from({ length: 500 }, (_, i) =>
        queuedEvent({}, i % 4 === 0 ? 'shift.created' : 'leave.approved'),
      );
      for (const job of jobs) {
        ids.push(job.event.id);
        if (job.event.type === 'shift.created') shifts.add(job.event.id);
      }
      await Promise.all(jobs.map((job) => app.enqueue(job)));
    }
    await expect.poll(() => dead, { timeout: 500_000, interval: 500 }).toBe(LETTERS);

    // A page is a few statements, not one per letter kept.
    const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
    const original = proto.query;
    let statements = 0;
    proto.query = function (this: unknown, ...args: unknown[]) {
      statements++;
      return original.apply(this, args);
    };
    try {
      expect((await operator.deadLetters({ limit: 1000 })).items).toHaveLength(1000);
    } finally {
      proto.query = original;
    }
    expect(statements).toBeLessThan(10);

    const seen = await walk(operator, { limit: 1000 });
    expect(seen.length).toBe(LETTERS);
    expect(new Set(seen).size).toBe(LETTERS);
    const listed = new Set(seen);
    expect(ids.filter((id) => !listed.has(id))).toEqual([]);

    const byType = await walk(operator, { limit: 700, type: 'shift.*' });
    expect(byType.length).toBe(shifts.size);
    expect(new Set(byType)).toEqual(shifts);
    // The same order as the walk of every letter.
    expect(byType).toEqual(seen.filter((id) => shifts.has(id)));

    const [first] = (await operator.deadLetters({ limit: 1 })).items;
    const newest = (await operator.deadLetters({ limit: 1000 })).items;
    expect(newest[0]!.event.id).toBe(first!.event.id);
    for (let i = 1; i < newest.length; i++)
      expect(newest[i]!.failedAt).toBeLessThanOrEqual(newest[i - 1]!.failedAt);

    // A window of failure times: `since` inclusive, `until` exclusive, in the same order.
    const at = newest[500]!.failedAt;
    const since = await operator.deadLetters({ limit: 1000, since: at });
    expect(since.items.map((letter) => letter.event.id)).toEqual(
      newest.filter((letter) => letter.failedAt >= at).map((letter) => letter.event.id),
    );
    const until = await operator.deadLetters({ limit: 10, until: new Date(at) });
    expect(until.items.map((letter) => letter.event.id)).toEqual(
      newest
        .filter((letter) => letter.failedAt < at)
        .slice(0, 10)
        .map((letter) => letter.event.id),
    );

    // What PostgreSQL text cannot hold: a cursor no job's id is, a type no event has.
    await expect(operator.deadLetters({ cursor: '1:a\u0000b' })).rejects.toBeInstanceOf(ConfigurationError);
    expect((await operator.deadLetters({ type: 'leave\u0000' })).items).toEqual([]);
  });
});
