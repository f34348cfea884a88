// The BullMQ queue opened from a client with `enableOfflineQueue: false` (the store's advice, one client for both):
// a Redis outage with events waiting must not freeze the process. Run in a child process, whose ticks show that its
// event loop still turns.
import { type ChildProcess, spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { hasRedisServer, startRedisServer } from '../setup/redis-server.js';

const INSTANCE = fileURLToPath(new URL('./bullmq-offline-instance.ts', import.meta.url));
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe.skipIf(!hasRedisServer())('createBullmqQueue from a client without an offline queue', () => {
  it('keeps the process turning through a Redis outage with events waiting', {
    timeout: 60_000,
  }, async () => {
    const server = await startRedisServer();
    cleanups.push(() => server.dispose());
    const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', INSTANCE], {
      env: { ...process.env, REDIS_URL: server.url },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    cleanups.push(async () => {
      if (child.exitCode === null) child.kill('SIGKILL');
    });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    await expect.poll(() => output.includes('running'), { timeout: 30_000 }).toBe(true);

    // Redis goes away; the running handler returns, and the worker asks for the waiting events meanwhile.
    await server.stop();
    child.stdin?.write('go\n');
    await sleep(500);
    const before = output.split('tick').length;
    await sleep(2000);
    // A wide bound: 20 ticks are due in 2 s; a frozen process prints none.
    expect(output.split('tick').length - before).toBeGreaterThan(3);
  });
});
