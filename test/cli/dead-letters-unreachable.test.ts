// `dead-letters` on a --redis that accepts the connection and never answers (a stopped Redis, a black-holing proxy):
// the runbook's "exits 1 when ... Redis cannot be reached", in bounded time, not a hung terminal or CI job; and on
// a Redis out of memory, which answers but refuses writes: said as such, not as unreachable.
import { once } from 'node:events';
import { createServer, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import { describe, it, type TestContext } from 'vitest';
import { HandlerFailure, silentLogger } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { queuedEvent } from '../contract/queue-suite.js';
import { uniqueName } from '../setup/redis-helpers.js';
import { hasRedisServer, startRedisServer } from '../setup/redis-server.js';
import { startCli } from './cli-process.js';

// Runs `dead-letters`, killing it after `ms`: its exit code (null when it had to be killed) and output.
async function runBounded(args: readonly string[], ms: number) {
  const child = startCli(['dead-letters', ...args]);
  child.stdin.end();
  const timer = setTimeout(() => child.kill('SIGKILL'), ms);
  const [code] = (await once(child, 'close')) as [number | null];
  clearTimeout(timer);
  return { code, err: child.err() };
}

// A TCP endpoint that accepts connections and never says anything; closed with the test.
async function silentRedis(onTestFinished: TestContext['onTestFinished']): Promise<string> {
  const sockets: Socket[] = [];
  const server = createServer((socket) => {
    sockets.push(socket);
    socket.on('error', () => {});
  });
  onTestFinished(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  return `redis://127.0.0.1:${port}`;
}

describe.concurrent('dead-letters on a --redis that never answers', () => {
  for (const action of ['list', 'replay', 'discard'] as const) {
    // The queue's admin deadline is 10 s and its close 5 s at most: 30 s leaves the process start room.
    it(`${action}: exits 1 within 30 s saying Redis cannot be reached`, { timeout: 60_000 }, async ({
      expect,
      onTestFinished,
    }) => {
      const url = await silentRedis(onTestFinished);
      const yes = action === 'list' ? [] : ['--yes'];
      const result = await runBounded(
        [action, '--redis', url, '--queue', 'workforce-webhooks', ...yes],
        30_000,
      );
      expect(result).toMatchObject({ code: 1, err: expect.stringMatching(/cannot reach Redis/) });
    });
  }
});

describe.skipIf(!hasRedisServer())('dead-letters on a --redis out of memory', () => {
  it('replay: exits 1 saying Redis is out of memory, not that it cannot be reached', {
    timeout: 60_000,
  }, async ({ expect, onTestFinished }) => {
    const server = await startRedisServer();
    onTestFinished(() => server.dispose());
    const name = uniqueName('oom');
    const queue = createBullmqQueue({ connection: server.url, name, attempts: 1 });
    let buried!: () => void;
    const dead = new Promise<void>((resolve) => {
      buried = resolve;
    });
    queue.start({
      logger: silentLogger,
      process: async () => {
        throw new HandlerFailure([new TypeError('down')], []);
      },
      onDeadLetter: async () => buried(),
    });
    await queue.enqueue(queuedEvent());
    await dead;
    await queue.close({ timeoutMs: 2000 });
    const admin = new Redis(server.url);
    onTestFinished(() => void admin.disconnect());
    await admin.config('SET', 'maxmemory-policy', 'noeviction');
    await admin.config('SET', 'maxmemory', '1');
    const result = await runBounded(['replay', '--redis', server.url, '--queue', name, '--yes'], 30_000);
    expect(result).toMatchObject({
      code: 1,
      err: expect.stringMatching(/Redis at --redis is out of memory/),
    });
    expect(result.err).not.toMatch(/cannot reach Redis/);
  });
});
