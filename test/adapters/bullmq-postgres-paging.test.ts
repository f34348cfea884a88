// BullMQ on Postgres reads its dead letters a page at a time after a cursor: past a thousand of them, a walk still
// lists every letter that stayed, once, while another operator discards, replays and new letters fail between pages.
import { createPostgresBackend } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import { type EventQueue, HandlerFailure, silentLogger } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { queuedEvent } from '../contract/queue-suite.js';
import { postgresUrl } from '../setup/postgres-helpers.js';
import { uniqueName } from '../setup/redis-helpers.js';

const LETTERS = 1001;

describe.skipIf(!postgresUrl)('BullMQ on Postgres: reading past 1 000 dead letters', () => {
  const open: EventQueue[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((queue) => queue.close({ timeoutMs: 5000 })));
  });

  it('lists every letter that stayed, once, while others are discarded, replayed and failed between pages', {
    timeout: 120_000,
  }, async () => {
    const name = uniqueName('pg-paging');
    const make = (extra: Record<string, unknown> = {}) =>
      createBullmqQueue({
        backend: createPostgresBackend,
        connection: { connectionString: postgresUrl, migrate: true, max: 8 },
        name,
        ...extra,
      });
    const app = make({ attempts: 1, concurrency: 50 });
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
    for (let sent = 0; sent < LETTERS; sent += 100) {
      const jobs = Array.from({ length: Math.min(100, LETTERS - sent) }, () => queuedEvent());
      ids.push(...jobs.map((job) => job.event.id));
      await Promise.all(jobs.map((job) => app.enqueue(job)));
    }
    await expect.poll(() => dead, { timeout: 90_000, interval: 250 }).toBe(LETTERS);

    // The order a walk gives while nothing changes.
    const order: string[] = [];
    for (let cursor: string | undefined, pages = 0; pages === 0 || cursor !== undefined; pages++) {
      const page = await operator.deadLetters({ limit: 1000, cursor });
      order.push(...page.items.map((letter) => letter.event.id));
      cursor = page.cursor;
    }
    expect([...order].sort()).toEqual([...ids].sort());

    const first = await operator.deadLetters({ limit: 400 });
    const seen = first.items.map((letter) => letter.event.id);
    // Between two pages: the letter the cursor points at and one the next page holds are discarded, a later one is
    // replayed (and fails again, newer than any page), and a new event fails.
    const cursorLetter = order[399]!;
    const discarded = order[450]!;
    const replayed = order[600]!;
    expect(await operator.discard(cursorLetter)).toBe(true);
    expect(await operator.discard(discarded)).toBe(true);
    expect(await operator.replay(replayed)).toBe(true);
    await app.enqueue(queuedEvent());
    await expect.poll(() => dead, { timeout: 30_000, interval: 100 }).toBe(LETTERS + 2);

    let cursor = first.cursor;
    while (cursor !== undefined) {
      const page = await operator.deadLetters({ limit: 400, cursor });
      seen.push(...page.items.map((letter) => letter.event.id));
      cursor = page.cursor;
    }
    expect(seen).toEqual(order.filter((id) => id !== discarded && id !== replayed));
  });
});
