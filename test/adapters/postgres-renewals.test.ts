// Ordering on PostgreSQL: a run's lease renewal goes on its own pool connection, so it may reach the server after
// the same run's `leave` or `hold` (a slow connection, a new one still connecting). It must not take the key back.
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { createMemoryQueue, createReceiver, type WorkforceEvent } from 'workforce-webhooks';
import { createPostgresStore } from 'workforce-webhooks/postgres';
import { postgresUrl, uniqueTable } from '../setup/postgres-helpers.js';
import { signedLeave, until } from '../support/ordering-scenario.js';

const secret = 'whsec_postgres_renewals';

// A lease renewal: the ordering `renew` statement, or (a store renewing with `enter`) an `enter` of a run that
// already entered once. Both carry the run as their fourth value.
// Told apart from the dedupe claim, which also reads the ordering table, by what they write.
const isRenew = (text: string | undefined): boolean =>
  text?.startsWith('UPDATE') === true &&
  text.includes('_ordering') &&
  text.includes('SET lease_until = now()');
const isEnter = (text: string | undefined): boolean =>
  text?.includes('(record_key, owner, run, since, lease_until)') === true;

// A real pg pool whose lease renewals reach the server `delayMs` late, as on a slow or still-connecting connection of
// the pool. Everything else goes at once.
class SlowRenewalPool extends pg.Pool {
  readonly runsSeen = new Set<string>();
  renewalIssued: (() => void) | undefined;
  renewalDone: (() => void) | undefined;
  constructor(
    url: string,
    readonly delayMs: number,
  ) {
    super({ connectionString: url, max: 10 });
    this.on('error', () => {});
  }
  // biome-ignore lint/suspicious/noExplicitAny: pg's overloaded query signature
  override query(config: any, ...rest: any[]): any {
    const text: string | undefined = typeof config === 'string' ? config : config?.text;
    const values: unknown[] | undefined = typeof config === 'string' ? rest[0] : config?.values;
    const run = values?.[3];
    if ((isEnter(text) || isRenew(text)) && typeof run === 'string') {
      if (isRenew(text) || this.runsSeen.has(run)) {
        const issued = this.renewalIssued;
        const done = this.renewalDone;
        this.renewalIssued = undefined;
        this.renewalDone = undefined;
        issued?.();
        return sleep(this.delayMs).then(async () => {
          // biome-ignore lint/suspicious/noExplicitAny: as above
          const result = await (super.query as any)(config, ...rest);
          done?.();
          return result;
        });
      }
      this.runsSeen.add(run);
    }
    // biome-ignore lint/suspicious/noExplicitAny: as above
    return (super.query as any)(config, ...rest);
  }
  // The next renewal: when it is sent, and when PostgreSQL has run it.
  nextRenewal(): { issued: Promise<void>; done: Promise<void> } {
    const issued = new Promise<void>((resolve) => {
      this.renewalIssued = resolve;
    });
    const done = new Promise<void>((resolve) => {
      this.renewalDone = resolve;
    });
    return { issued, done };
  }
}

const pools: pg.Pool[] = [];
afterAll(async () => {
  await Promise.all(pools.map((pool) => pool.end().catch(() => {})));
});

const setUp = async (options: { maxWaitMs?: number; backoffMs?: number; attempts?: number } = {}) => {
  const pool = new SlowRenewalPool(postgresUrl, 150);
  pools.push(pool);
  const table = uniqueTable('renewals');
  const store = createPostgresStore({ pool, table, cleanupIntervalMs: 0 });
  await store.migrate();
  const receiver = createReceiver({
    secret,
    store,
    leaseMs: 3000, // renewed every second
    queue: createMemoryQueue({ attempts: options.attempts ?? 3, backoff: () => options.backoffMs ?? 0 }),
    ordering: options.maxWaitMs === undefined ? {} : { maxWaitMs: options.maxWaitMs },
  });
  onTestFinished(() => receiver.close());
  return { pool, receiver, table };
};

describe.skipIf(!postgresUrl)(
  'Postgres ordering: a lease renewal that reaches the server after its run ended',
  () => {
    it('runs a newer event of the record at once after the older one succeeded, not a whole lease later', {
      timeout: 20_000,
    }, async () => {
      const { pool, receiver } = await setUp();
      const key = crypto.randomUUID();
      const times: Record<string, number> = {};
      const renewal = pool.nextRenewal();
      receiver.on('leave.*', async (event: WorkforceEvent) => {
        times[`start ${event.type}`] = Date.now();
        // The older event's handlers end just as their run's first renewal is on its way.
        if (event.type === 'leave.requested') await renewal.issued;
        times[`end ${event.type}`] = Date.now();
      });
      expect((await receiver.handle(await signedLeave(secret, 'leave.requested', 1, key))).status).toBe(202);
      await until(() => times['end leave.requested'] !== undefined, 'the older event', 5000);
      await renewal.done; // the late renewal ran, after the run's leave
      await sleep(50);
      const newerSent = Date.now();
      expect((await receiver.handle(await signedLeave(secret, 'leave.approved', 2, key))).status).toBe(202);
      await until(() => times['end leave.approved'] !== undefined, 'the newer event', 10_000);
      // Nothing holds the record: the newer event should start within a poll or two (100–200 ms each).
      expect(times['start leave.approved']! - newerSent).toBeLessThan(1000);
    });

    it("keeps a failing event's hold until maxWaitMs: its retry runs before the newer event, not skipped as stale", {
      timeout: 20_000,
    }, async () => {
      // maxWaitMs 20 s: the newer event should wait for the failing event's retry (backoff 4 s) however long the
      // lease (3 s).
      const { pool, receiver } = await setUp({ maxWaitMs: 20_000, backoffMs: 4000 });
      const key = crypto.randomUUID();
      const runs: string[] = [];
      const renewal = pool.nextRenewal();
      receiver.on('leave.*', async (event: WorkforceEvent, ctx) => {
        runs.push(`${event.type}#${ctx.attempt}`);
        if (event.type === 'leave.requested' && ctx.attempt === 1) {
          await renewal.issued;
          throw new Error('the calendar is down');
        }
      });
      expect((await receiver.handle(await signedLeave(secret, 'leave.requested', 1, key))).status).toBe(202);
      await renewal.done; // the late renewal ran, after the run's hold
      await sleep(50);
      expect((await receiver.handle(await signedLeave(secret, 'leave.approved', 2, key))).status).toBe(202);
      await until(() => runs.includes('leave.approved#1'), 'the newer event', 15_000);
      await sleep(200);
      expect(runs).toEqual(['leave.requested#1', 'leave.requested#2', 'leave.approved#1']);
    });

    it('runs a newer event of the record at once after the older one became a dead letter, not a lease or maxWaitMs later', {
      timeout: 30_000,
    }, async () => {
      // One attempt: the failing event is a dead letter at once, and its key is given up for the newer events.
      const { pool, receiver } = await setUp({ maxWaitMs: 20_000, attempts: 1 });
      const key = crypto.randomUUID();
      const times: Record<string, number> = {};
      const renewal = pool.nextRenewal();
      receiver.on('leave.*', async (event: WorkforceEvent) => {
        times[`start ${event.type}`] = Date.now();
        if (event.type === 'leave.requested') {
          await renewal.issued;
          throw new Error('the calendar is down');
        }
      });
      expect((await receiver.handle(await signedLeave(secret, 'leave.requested', 1, key))).status).toBe(202);
      await renewal.done; // the late renewal ran, after the run's hold and the dead letter's leave
      await sleep(100);
      expect((await receiver.deadLetters()).items.map((letter) => letter.event.type)).toEqual([
        'leave.requested',
      ]);
      const newerSent = Date.now();
      expect((await receiver.handle(await signedLeave(secret, 'leave.approved', 2, key))).status).toBe(202);
      await until(() => times['start leave.approved'] !== undefined, 'the newer event', 25_000);
      expect(times['start leave.approved']! - newerSent).toBeLessThan(1000);
    });

    it('runs a newer event of the record at once after the older one failed once then succeeded, not a lease or maxWaitMs later', {
      timeout: 30_000,
    }, async () => {
      const { pool, receiver } = await setUp({ maxWaitMs: 20_000, backoffMs: 0 });
      const key = crypto.randomUUID();
      const times: Record<string, number> = {};
      const renewal = pool.nextRenewal();
      receiver.on('leave.*', async (event: WorkforceEvent, ctx) => {
        times[`start ${event.type}#${ctx.attempt}`] = Date.now();
        if (event.type === 'leave.requested' && ctx.attempt === 1) {
          await renewal.issued;
          throw new Error('the calendar is down'); // its retry, at once, succeeds
        }
        times[`end ${event.type}#${ctx.attempt}`] = Date.now();
      });
      expect((await receiver.handle(await signedLeave(secret, 'leave.requested', 1, key))).status).toBe(202);
      await renewal.done; // the first run's late renewal ran, after its hold, its retry's entry and its retry's leave
      await sleep(100);
      expect(times['end leave.requested#2']).toBeDefined();
      const newerSent = Date.now();
      expect((await receiver.handle(await signedLeave(secret, 'leave.approved', 2, key))).status).toBe(202);
      await until(() => times['start leave.approved#1'] !== undefined, 'the newer event', 25_000);
      expect(times['start leave.approved#1']! - newerSent).toBeLessThan(1000);
    });
  },
);
