// Starting a benchmark server as a child process pinned to the server core, and stopping it.
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { pinned, SERVER_CORE, tsNode } from './cpu.js';

/** A running benchmark server. */
export interface ServerProcess {
  readonly port: number;
  readonly child: ChildProcess;
  /** CPU time (user + system) the server has used so far, in microseconds. */
  cpuMicros(): number;
  stop(): Promise<void>;
}

const RUNTIME = /se\.sum_exec_runtime\s*:\s*([\d.]+)/;
// Whether this kernel reports each thread's run time to the nanosecond.
const PRECISE = ((): boolean => {
  try {
    return RUNTIME.test(readFileSync('/proc/thread-self/sched', 'utf8'));
  } catch {
    return false;
  }
})();

// CPU time of every thread of the server: `se.sum_exec_runtime` (ms, to the nanosecond) of /proc/<pid>/task/*/sched,
// or else utime + stime of /proc/<pid>/stat in clock ticks (100 a second). `taskset` execs the server, so the
// child's pid is the server's. CPU time per request holds still while other work on the machine steals the core.
function cpuMicros(pid: number | undefined): number {
  if (!PRECISE) {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  }
  let total = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    let text: string;
    try {
      text = readFileSync(`/proc/${pid}/task/${task}/sched`, 'utf8');
    } catch {
      continue; // the thread ended between the listing and the read
    }
    total += Number(RUNTIME.exec(text)?.[1] ?? 0) * 1000;
  }
  return total;
}

/**
 * Runs `bench/servers/<name>.ts <variant>` on the server core and resolves once it listens.
 * @example
 * const server = await startServer('node', 'package');
 */
export function startServer(
  name: string,
  variant: string,
  {
    env = {},
    nodeArgs = [],
    ipc = false,
  }: { env?: Record<string, string>; nodeArgs?: readonly string[]; ipc?: boolean } = {},
): Promise<ServerProcess> {
  const [command, args] = pinned(SERVER_CORE, tsNode(`bench/servers/${name}.ts`, [variant], nodeArgs));
  // `ipc`: a channel for servers that report progress (`taskset` execs the server, which keeps the channel).
  const stdio = ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'];
  // tsx would follow tsconfig.json's paths to src/ (and wrap every function in a name helper); bench/tsconfig.json
  // drops them, so a server started by any entry point (bench/profile.ts too) runs the built package in dist/.
  const child = spawn(command, args, {
    env: { ...process.env, TSX_TSCONFIG_PATH: 'bench/tsconfig.json', ...env },
    stdio: stdio as ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const stop = (): Promise<void> =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      const match = /listening (\d+)/.exec(out);
      if (match !== null)
        resolve({ port: Number(match[1]), child, stop, cpuMicros: () => cpuMicros(child.pid) });
    });
    child.once('exit', (code) =>
      reject(
        new Error(
          `server ${name} ${variant} exited ${code}: ${stderr.trim().split('\n').slice(-3).join(' / ')}`,
        ),
      ),
    );
  });
}

/**
 * Resolves once a server started with `ipc` has processed `count` events in all (see bench/servers/durable.ts).
 * @example
 * await processed(server, 1000);
 */
export function processed(server: ServerProcess, count: number, timeoutMs = 120_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      server.child.off('message', onMessage);
      reject(new Error(`bench: ${count} events not processed within ${timeoutMs} ms`));
    }, timeoutMs);
    const onMessage = (message: { processed: number }): void => {
      if (message.processed < count) return;
      clearTimeout(timer);
      server.child.off('message', onMessage);
      resolve();
    };
    server.child.on('message', onMessage);
    server.child.send({ until: count });
  });
}
