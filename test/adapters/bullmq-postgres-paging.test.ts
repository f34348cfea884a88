// BullMQ on Postgres reads its dead letters through BullMQ's API: past a thousand of them, a walk still lists every
// letter that stayed, once, while another operator discards one in the middle of a read.
import { createPostgresBackend, Queue } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import { type EventQueue, HandlerFailure, silentLogger } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { queuedEvent } from '../contract/queue-suite.js';
import { postgresUrl } from '../setup/postgres-helpers.js';
import { uniqueName } from '../setup/redis-helpers.js';

const LETTERS = 1001;

describe.skipIf(!postgresUrl)('BullMQ on Postgres: reading past 1 000 dead letters', () => {
  const open: EventQueue[] = [];
  const restores: (() => void)[] = [];
  afterEach(async () => {
    for (const restore of restores.splice(0)) restore();
    await Promise.all(open.splice(0).map((queue) => queue.close({ timeoutMs: 5000 })));
  });

  // Runs `discard` once, right after the first read of the failed jobs' ids (whichever call the queue reads them by).
  function discardDuringRead(discard: () => Promise<void>): void {
    const proto = Queue.prototype as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    let done = false;
    for (const method of ['getRanges', 'getFailed']) {
      const original = proto[method]!;
      proto[method] = async function (this: unknown, ...args: unknown[]) {
        const found = await original.apply(this, args);
        if (!done) {
          done = true;
          await discard();
        }
        return found;
      };
      restores.push(() => {
        proto[method] = original;
      });
    }
  }

  it('lists every letter that stayed, once, while another is discarded during a read', {
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

    // A letter among the newest (read before a read by offset reaches the thousandth) goes mid-read.
    const [newest] = (await operator.deadLetters({ limit: 10 })).items;
    const discarded = newest!.event.id;
    discardDuringRead(async () => {
      expect(await operator.discard(discarded)).toBe(true);
    });

    const seen: string[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 10; pages++) {
      const page = await operator.deadLetters({ limit: 1000, cursor });
      seen.push(...page.items.map((letter) => letter.event.id));
      cursor = page.cursor;
      if (cursor === undefined) break;
    }
    expect(ids.filter((id) => id !== discarded && !seen.includes(id))).toEqual([]);
    expect(seen.length).toBe(new Set(seen).size);
    expect(seen).not.toContain(discarded);
  });
});
