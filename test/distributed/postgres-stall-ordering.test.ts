// Spec rule 4 across three instances on the Postgres store and BullMQ on Postgres, that PostgreSQL paused (SIGSTOP)
// past the store's deadline while deliveries arrive: after SIGCONT, newest state, one run per record at a time, never
// older over newer, each event run or counted stale once.
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresStore } from 'workforce-webhooks/postgres';
import { connectPostgres, postgresUrl, uniqueTable } from '../setup/postgres-helpers.js';
import { type PostgresServer, startPostgresServer } from '../setup/postgres-server.js';
import { connectRedis, redisUrl } from '../setup/redis-helpers.js';
import {
  checkOrdering,
  deliverShuffled,
  leaveLifecycles,
  type RunRecord,
} from '../support/ordering-scenario.js';
import { type Instance, startInstance } from './cluster.js';

const SCRIPT = fileURLToPath(new URL('./ordering-instance.ts', import.meta.url));
const secret = 'whsec_postgres_stall_ordering';

describe.skipIf(!redisUrl || !postgresUrl)('ordering across instances through a paused PostgreSQL', () => {
  // A server of this file's own: pausing the run's would stall every other file.
  let postgres: PostgresServer;
  const running: Instance[] = [];
  beforeAll(async () => {
    postgres = await startPostgresServer();
  }, 60_000);
  afterAll(async () => {
    await postgres?.resume();
    await Promise.all(running.splice(0).map((instance) => instance.stop('SIGKILL')));
    await postgres?.dispose();
  });

  it('keeps every record newest-last and each event once, the server paused for longer than the deadline', {
    timeout: 240_000,
  }, async () => {
    const name = uniqueTable('stall_ordering');
    const db = connectPostgres(postgres.url);
    await createPostgresStore({ pool: db, table: `${name}_events`, cleanupIntervalMs: 0 }).migrate();
    const env = {
      REDIS_URL: redisUrl,
      POSTGRES_URL: postgres.url,
      STORE: 'postgres',
      DEFAULT_LOCKS: '1',
      RUN_NAME: name,
      SECRET: secret,
    };
    const instances = await Promise.all(
      ['a', 'b', 'c'].map((i) => startInstance({ ...env, INSTANCE: i }, SCRIPT)),
    );
    running.push(...instances);
    const redis = connectRedis();
    const ended = async () =>
      (await redis.lrange(`${name}:runs`, 0, -1)).filter((line) => line.includes('"kind":"end"')).length;

    const events = leaveLifecycles(60);
    const delivering = deliverShuffled(
      events,
      instances.map((instance) => instance.url),
      secret,
      400,
    );
    // Paused mid-stream, for longer than the store's deadline (2 s by default).
    await expect.poll(ended, { timeout: 60_000, interval: 20 }).toBeGreaterThan(20);
    await postgres.pause();
    await sleep(2500);
    await postgres.resume();
    await delivering;

    const read = async () => {
      const runs = (await redis.lrange(`${name}:runs`, 0, -1)).map((line) => JSON.parse(line) as RunRecord);
      const stale = new Map(
        Object.entries(await redis.hgetall(`${name}:stale`)).map(([id, n]) => [id, Number(n)] as const),
      );
      return { runs, stale };
    };
    await expect
      .poll(
        async () => {
          const { runs, stale } = await read();
          return runs.filter((r) => r.kind === 'end').length + [...stale.values()].reduce((a, b) => a + b, 0);
        },
        { timeout: 120_000, interval: 200 },
      )
      .toBeGreaterThanOrEqual(events.length);
    // Stopped gracefully, so nothing late comes after the count.
    await Promise.all(running.splice(0).map((instance) => instance.stop('SIGTERM')));
    const { runs, stale } = await read();
    checkOrdering(events, runs, stale, new Map(Object.entries(await redis.hgetall(`${name}:state`))));
  });
});
