// A throwaway redis-server for the Redis section: a free port, a temp dir, no persistence, pinned with the client.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { CLIENT_CORE, pinned } from './cpu.js';

/** A running redis-server this process started. */
export interface RedisProcess {
  readonly url: string;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts `/usr/bin/redis-server` on a free loopback port and resolves once it answers PING.
 * @example
 * const redis = await startRedis(); ...; await redis.stop();
 */
export async function startRedis(): Promise<RedisProcess> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'wfwh-bench-redis-'));
  const [command, args] = pinned(CLIENT_CORE, [
    'redis-server',
    ...['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no'],
  ]);
  const child = spawn(command, args, { stdio: 'ignore' });
  const url = `redis://127.0.0.1:${port}`;
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => 50 });
  probe.on('error', () => {}); // refused until the server is up: expected while waiting
  for (let attempt = 0; ; attempt++) {
    try {
      await probe.connect();
      await probe.ping();
      break;
    } catch (error) {
      if (attempt > 100) throw error;
      probe.disconnect();
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  probe.disconnect();
  return {
    url,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => {
          rmSync(dir, { recursive: true, force: true });
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}

/**
 * Runs a section against its redis-server, then always runs `cleanup`, disconnects `admin`, stops the server and
 * exits the process: a worker's connection still retrying the stopped server would keep it alive. An error is
 * printed first, since the exit would swallow it, and makes the exit code 1.
 * @example
 * await runSection(redis, admin, async () => { emit(await measure()); });
 */
export async function runSection(
  redis: RedisProcess,
  admin: Redis,
  body: () => Promise<void>,
  cleanup: () => Promise<unknown> = async () => {},
): Promise<void> {
  try {
    await body();
  } catch (error) {
    console.error(error);
    process.exitCode = 1;
  } finally {
    await cleanup();
    admin.disconnect();
    await redis.stop();
    process.exit(process.exitCode ?? 0);
  }
}
