// Starts and stops a real, throwaway redis-server on a free loopback port with its own temporary directory.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onFreePort } from '../support/free-port.js';

/** Where the Debian package puts the binary; `REDIS_SERVER` overrides it. */
export const REDIS_SERVER_BINARY: string = process.env.REDIS_SERVER ?? '/usr/bin/redis-server';

/** A redis-server this process started; `stop` and `start` again keep its port, so clients reconnect. */
export interface RedisServer {
  readonly url: string;
  readonly port: number;
  /** Kills the server (SIGKILL when `crash`, else SIGTERM) and waits for it to exit. */
  stop(options?: { readonly crash?: boolean }): Promise<void>;
  /** SIGSTOP: alive, its connections open, but silent (a network black hole), until `resume`. */
  pause(): void;
  /** SIGCONT: it answers again, running the commands that arrived meanwhile. */
  resume(): void;
  /** Starts it again on the same port, with an empty dataset. */
  start(): Promise<void>;
  /** Stops it for good and removes its directory. */
  dispose(): Promise<void>;
}

/**
 * Whether a redis-server binary can be run here.
 * @example
 * if (!hasRedisServer()) console.warn('no redis-server');
 */
export function hasRedisServer(): boolean {
  return existsSync(REDIS_SERVER_BINARY);
}

/**
 * Starts redis-server on `port` of 127.0.0.1 with its files in `dir` and `extra` arguments, and resolves once it
 * accepts connections. No persistence (a restart is an empty Redis, like a lost cache) and noeviction, as the
 * README ("Running several instances") requires.
 * @example
 * const child = await launchRedisServer(port, dir, ['--cluster-enabled', 'yes']);
 */
export function launchRedisServer(
  port: number,
  dir: string,
  extra: readonly string[] = [],
): Promise<ChildProcess> {
  const child = spawn(
    REDIS_SERVER_BINARY,
    [
      ...extra,
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--save',
      '',
      '--appendonly',
      'no',
      '--maxmemory-policy',
      'noeviction',
      '--logfile',
      '',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => fail(new Error('redis-server did not start within 10 s')), 10_000);
    const fail = (error: Error): void => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${error.message}\n${output}`));
    };
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer);
        child.stdout?.removeAllListeners('data');
        child.stdout?.resume();
        child.off('exit', exited);
        resolve(child);
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('error', fail);
    const exited = (code: number | null): void => fail(new Error(`redis-server exited with ${code}`));
    child.once('exit', exited);
  });
}

/**
 * Starts a redis-server on a free port of 127.0.0.1, in a temporary directory, with `args` added to its command line
 * (each start).
 * @example
 * const redis = await startRedisServer(['--requirepass', 'the-right-one']);
 * await redis.stop(); await redis.start(); await redis.dispose();
 */
export async function startRedisServer(args: readonly string[] = []): Promise<RedisServer> {
  const dir = await mkdtemp(join(tmpdir(), 'wfwh-redis-'));
  const { port, launched } = await onFreePort(async (port) => ({
    port,
    launched: await launchRedisServer(port, dir, args),
  }));
  let child: ChildProcess | undefined = launched;
  const stop = async ({ crash = false } = {}): Promise<void> => {
    const running = child;
    child = undefined;
    if (running === undefined || running.exitCode !== null) return;
    running.removeAllListeners('exit');
    running.kill('SIGCONT'); // a paused server cannot act on SIGTERM
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill(crash ? 'SIGKILL' : 'SIGTERM');
    await exited;
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop,
    pause() {
      child?.kill('SIGSTOP');
    },
    resume() {
      child?.kill('SIGCONT');
    },
    async start() {
      if (child === undefined) child = await launchRedisServer(port, dir, args);
    },
    async dispose() {
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
