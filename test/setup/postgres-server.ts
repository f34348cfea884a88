// Starts and stops a real, throwaway PostgreSQL (the Debian package's binaries) on a free loopback port.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { chown, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { onFreePort } from '../support/free-port.js';

const run = promisify(execFile);
const DEBIAN_ROOT = '/usr/lib/postgresql';

/**
 * The directory of `initdb`, `pg_ctl` and `postgres`: `POSTGRES_BIN` when set, else the newest version the Debian
 * package installed under /usr/lib/postgresql/<version>/bin; undefined when there is none.
 */
export const POSTGRES_BIN: string | undefined = process.env.POSTGRES_BIN ?? newestDebianBin();

function newestDebianBin(): string | undefined {
  if (!existsSync(DEBIAN_ROOT)) return undefined;
  const versions = readdirSync(DEBIAN_ROOT)
    .filter((name) => /^\d+$/.test(name) && existsSync(join(DEBIAN_ROOT, name, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(DEBIAN_ROOT, versions[0], 'bin');
}

/** A PostgreSQL this process started; `stop` and `start` again keep its port and its data. */
export interface PostgresServer {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust authentication on loopback). */
  readonly url: string;
  readonly port: number;
  /** Stops the server: `immediate` (a crash: no checkpoint, recovery from the WAL on start) when `crash`, else `fast`. */
  stop(options?: { readonly crash?: boolean }): Promise<void>;
  /** Starts it again on the same port, with the data it had. */
  start(): Promise<void>;
  /**
   * Stops the postmaster and its backends with SIGSTOP: alive but silent, connections open and nothing answered
   * (a hung host, a network black hole). Linux only (/proc).
   */
  pause(): Promise<void>;
  /** Lets a paused server answer again (SIGCONT). */
  resume(): Promise<void>;
  /** Stops it for good and removes its directory. */
  dispose(): Promise<void>;
}

/**
 * Whether PostgreSQL's server binaries can be run here.
 * @example
 * if (!hasPostgres()) console.warn('no PostgreSQL');
 */
export function hasPostgres(): boolean {
  return POSTGRES_BIN !== undefined && existsSync(join(POSTGRES_BIN, 'initdb'));
}

// PostgreSQL refuses to run as root (who CI runs as): then run as the `postgres` user the Debian package creates.
const asRoot = process.getuid?.() === 0;

async function postgresUser(): Promise<{ readonly uid: number; readonly gid: number }> {
  const [{ stdout: uid }, { stdout: gid }] = await Promise.all([
    run('id', ['-u', 'postgres']),
    run('id', ['-g', 'postgres']),
  ]);
  return { uid: Number(uid.trim()), gid: Number(gid.trim()) };
}

async function pg(binary: string, args: readonly string[]): Promise<string> {
  const path = join(POSTGRES_BIN ?? '', binary);
  const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', path, ...args]] : [path, [...args]];
  try {
    const { stdout } = await run(file, argv, { timeout: 60_000 });
    return stdout;
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`${binary} ${args.join(' ')} failed: ${(error as Error).message}\n${stdout}\n${stderr}`);
  }
}

/**
 * Creates a cluster in a temporary directory (`initdb`) and starts it (`pg_ctl start`) on a free port of 127.0.0.1.
 * @example
 * const postgres = await startPostgresServer();
 * await postgres.stop({ crash: true }); await postgres.start(); await postgres.dispose();
 */
export async function startPostgresServer(): Promise<PostgresServer> {
  if (!hasPostgres()) throw new Error('PostgreSQL server binaries not found (set POSTGRES_BIN)');
  const dir = await mkdtemp(join(tmpdir(), 'wfwh-postgres-'));
  if (asRoot) {
    const { uid, gid } = await postgresUser();
    await chown(dir, uid, gid);
  }
  const data = join(dir, 'data');
  await pg('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);

  let port = 0;
  let running = false;
  // Throwaway data: no fsync (a killed server still recovers from the WAL in the page cache), and sockets only
  // on loopback and in the directory, never in /var/run/postgresql.
  const options = (): string =>
    [
      `-p ${port}`,
      '-c listen_addresses=127.0.0.1',
      `-c unix_socket_directories=${dir}`,
      '-c max_connections=200',
      '-c fsync=off',
      '-c full_page_writes=off',
    ].join(' ');
  // The postmaster (first line of postmaster.pid) and its children, read from /proc.
  const family = async (): Promise<number[]> => {
    const postmaster = Number((await readFile(join(data, 'postmaster.pid'), 'utf8')).split('\n')[0]);
    const parentOf = (pid: string): number => {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    };
    const children = readdirSync('/proc').filter((name) => {
      if (!/^\d+$/.test(name)) return false;
      try {
        return parentOf(name) === postmaster;
      } catch {
        return false; // ended meanwhile
      }
    });
    return [postmaster, ...children.map(Number)];
  };
  const signal = async (name: 'SIGSTOP' | 'SIGCONT'): Promise<void> => {
    for (const pid of await family()) {
      try {
        process.kill(pid, name);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error; // a backend that ended meanwhile
      }
    }
  };

  const start = async (): Promise<void> => {
    if (running) return;
    await pg('pg_ctl', ['start', '-w', '-t', '60', '-D', data, '-l', join(dir, 'log'), '-o', options()]);
    running = true;
  };
  const stop = async ({ crash = false } = {}): Promise<void> => {
    if (!running) return;
    running = false;
    // A paused server would never hear pg_ctl.
    await signal('SIGCONT').catch(() => {});
    await pg('pg_ctl', ['stop', '-w', '-t', '60', '-D', data, '-m', crash ? 'immediate' : 'fast']);
  };

  await onFreePort(async (free) => {
    port = free;
    await start();
  });
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    stop,
    start,
    pause: () => signal('SIGSTOP'),
    resume: () => signal('SIGCONT'),
    async dispose() {
      await stop().catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
  };
}
