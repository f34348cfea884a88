// A replayed dead letter on BullMQ's Postgres backend gets every attempt the app gave its event, as on Redis.
import { createPostgresBackend } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import { type DeadLetter, type EventQueue, HandlerFailure, silentLogger } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { queuedEvent } from '../contract/queue-suite.js';
import { postgresUrl } from '../setup/postgres-helpers.js';
import { uniqueName } from '../setup/redis-helpers.js';

const ATTEMPTS = 4;
const open: EventQueue[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((queue) => queue.close({ timeoutMs: 5000 })));
});

describe.skipIf(!postgresUrl)('BullMQ on Postgres: replaying a letter an inline run handed over', () => {
  it('runs one handed over with no attempt left through every one of `attempts`', {
    timeout: 90_000,
  }, async () => {
    const name = uniqueName('pg-replay-attempts');
    const make = (extra: Record<string, unknown> = {}) =>
      createBullmqQueue({
        backend: createPostgresBackend,
        connection: { connectionString: postgresUrl, migrate: true, max: 4 },
        name,
        ...extra,
      });
    const app = make({ attempts: ATTEMPTS, backoff: () => 1 });
    // The operator's queue: the app's name, its own options (attempts 5 by default).
    const operator = make();
    open.push(app, operator);
    const seen: number[] = [];
    const dead: DeadLetter[] = [];
    app.start({
      logger: silentLogger,
      process: async (_job, ctx) => {
        seen.push(ctx.attempt);
        throw new HandlerFailure([new TypeError('down')], []);
      },
      onDeadLetter: async (letter) => {
        dead.push(letter);
      },
    });
    // An inline run made the last attempt before handing the event over: a dead letter at once, never run here.
    const job = queuedEvent({ attemptsMade: ATTEMPTS });
    await app.enqueue(job, new HandlerFailure([new TypeError('down')], []));
    await expect.poll(() => dead.length, { timeout: 30_000 }).toBe(1);
    expect(seen).toEqual([]);
    expect(dead[0]!.attempts).toBe(ATTEMPTS);
    await expect.poll(async () => (await operator.deadLetters()).items.length, { timeout: 10_000 }).toBe(1);

    expect(await operator.replay(job.event.id)).toBe(true);
    await expect.poll(() => dead.length, { timeout: 30_000 }).toBe(2);
    expect(seen).toEqual([1, 2, 3, 4]);
    expect(dead[1]!.attempts).toBe(ATTEMPTS);
  });
});
