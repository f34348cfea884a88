// Vitest global setup: one real redis-server for the whole run, its URL provided to tests as `redisUrl`.
import type { TestProject } from 'vitest/node';
import { hasRedisServer, REDIS_SERVER_BINARY, type RedisServer, startRedisServer } from './redis-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** `redis://127.0.0.1:<port>` of the run's redis-server; empty when there is none (tests skip). */
    redisUrl: string;
  }
}

let server: RedisServer | undefined;

/**
 * Starts redis-server, or says loudly why the Redis tests will skip (and fails under `WFWH_REQUIRE_REDIS=1`).
 * @example
 * // vitest.config.ts: test: { globalSetup: ['test/setup/redis.ts'] }
 */
export async function setup(project: TestProject): Promise<void> {
  if (!hasRedisServer()) {
    const message = `redis-server not found at ${REDIS_SERVER_BINARY}: the Redis store, BullMQ queue and multi-instance tests cannot run`;
    if (process.env.WFWH_REQUIRE_REDIS === '1') throw new Error(`${message} (WFWH_REQUIRE_REDIS=1)`);
    console.warn(
      `\n${'!'.repeat(100)}\n!!! ${message}; they are SKIPPED.\n!!! Install it (apt-get install redis-server) or set REDIS_SERVER.\n${'!'.repeat(100)}\n`,
    );
    project.provide('redisUrl', '');
    return;
  }
  server = await startRedisServer();
  project.provide('redisUrl', server.url);
}

/**
 * Stops the run's redis-server and removes its directory.
 * @example
 * await teardown();
 */
export async function teardown(): Promise<void> {
  await server?.dispose();
  server = undefined;
}
