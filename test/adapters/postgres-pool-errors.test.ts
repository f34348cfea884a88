// An idle connection of the store's pool that Postgres drops (a restart, pg_terminate_backend): no process crash.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createPostgresStore } from 'workforce-webhooks/postgres';
import { connectPostgres, postgresUrl, uniqueTable } from '../setup/postgres-helpers.js';
import { recordingLogger } from '../support/logger.js';

// Ends, from another pool, every connection whose application_name is `name` (what a restart does to them).
async function dropConnections(name: string): Promise<void> {
  const admin = connectPostgres();
  await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [
    name,
  ]);
}

// Runs `body` with the process's uncaught exceptions recorded instead of ending the run.
async function recordingUncaught(body: (uncaught: unknown[]) => Promise<void>): Promise<void> {
  const uncaught: unknown[] = [];
  const listener = (error: unknown) => uncaught.push(error);
  process.on('uncaughtException', listener);
  try {
    await body(uncaught);
  } finally {
    process.off('uncaughtException', listener);
  }
}

describe.skipIf(!postgresUrl)('idle connections of the pool dropped by Postgres', () => {
  it("keeps the process up on a pool with no 'error' listener, warns once with the fix, and serves again", async () => {
    const name = uniqueTable('no_listener');
    // As the pool of a first try is made: no error listener.
    const pool = new pg.Pool({ connectionString: postgresUrl, max: 3, application_name: name });
    const logger = recordingLogger();
    try {
      await recordingUncaught(async (uncaught) => {
        const store = createPostgresStore({
          pool,
          table: uniqueTable('dropped'),
          cleanupIntervalMs: 0,
          logger,
        });
        await store.migrate();
        for (let round = 0; round < 2; round++) {
          // Idle connections in the pool, then a restart-like drop of them.
          await Promise.all([1, 2, 3].map(() => pool.query('SELECT pg_sleep(0.05)')));
          expect(pool.idleCount).toBe(3);
          await dropConnections(name);
          await expect.poll(() => pool.totalCount, { timeout: 5000 }).toBe(0);
          expect((await store.claim(crypto.randomUUID(), 30_000)).status).toBe('claimed');
        }
        expect(uncaught).toEqual([]);
        const warned = logger.lines.filter((line) => line.level === 'warn');
        expect(warned).toHaveLength(1);
        expect(warned[0]!.msg).toMatch(/no 'error' listener of its own.*pool\.on\('error'/);
        store.close();
        expect(pool.listenerCount('error')).toBe(0);
      });
    } finally {
      pool.on('error', () => {});
      await pool.end();
    }
  });

  it("warns once per store when two stores share a pool with no 'error' listener of its own", async () => {
    const name = uniqueTable('shared');
    const pool = new pg.Pool({ connectionString: postgresUrl, max: 2, application_name: name });
    const logger = recordingLogger();
    try {
      await recordingUncaught(async (uncaught) => {
        const stores = [uniqueTable('one'), uniqueTable('two')].map((table) =>
          createPostgresStore({ pool, table, cleanupIntervalMs: 0, logger }),
        );
        await Promise.all([1, 2].map(() => pool.query('SELECT pg_sleep(0.05)')));
        await dropConnections(name);
        await expect.poll(() => pool.totalCount, { timeout: 5000 }).toBe(0);
        expect(uncaught).toEqual([]);
        expect(logger.lines.filter((line) => line.level === 'warn')).toHaveLength(2);
        for (const store of stores) store.close();
      });
    } finally {
      pool.on('error', () => {});
      await pool.end();
    }
  });

  it("leaves the pool's own 'error' listener to say it, and says nothing itself", async () => {
    const name = uniqueTable('own_listener');
    const pool = connectPostgres(postgresUrl, { max: 2, application_name: name });
    const heard: string[] = [];
    pool.on('error', (error) => heard.push(error.message));
    const logger = recordingLogger();
    const store = createPostgresStore({ pool, table: uniqueTable('dropped'), cleanupIntervalMs: 0, logger });
    await store.migrate();
    await Promise.all([1, 2].map(() => pool.query('SELECT pg_sleep(0.05)')));
    await dropConnections(name);
    await expect.poll(() => heard.length, { timeout: 5000 }).toBe(2);
    expect(logger.lines).toEqual([]);
    store.close();
  });
});
