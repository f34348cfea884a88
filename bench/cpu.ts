// Pinning processes to one core each with `taskset` (the server on core 0, the load generator on core 1).
import { spawnSync } from 'node:child_process';

/** True when `taskset` is installed and the machine has at least two cores to split. */
export const CAN_PIN: boolean =
  spawnSync('taskset', ['-c', '0', 'true']).status === 0 &&
  (await import('node:os')).availableParallelism() >= 2;

/** The core servers run on; the load generator and Redis take the other. */
export const SERVER_CORE = 0;
export const CLIENT_CORE = 1;

/**
 * The command line that runs `args` pinned to `core` (unpinned when `taskset` is missing).
 * @example
 * spawn(...pinned(0, [process.execPath, 'server.js']));
 */
export function pinned(core: number, args: readonly string[]): [string, string[]] {
  return CAN_PIN ? ['taskset', ['-c', String(core), ...args]] : [args[0]!, args.slice(1)];
}

/**
 * How to start a TypeScript file of `bench/` with Node: through tsx, resolving the package to `dist/`.
 * @example
 * pinned(0, tsNode('bench/servers/node.ts', ['package']));
 */
export function tsNode(
  file: string,
  args: readonly string[] = [],
  nodeArgs: readonly string[] = [],
): string[] {
  return [process.execPath, ...nodeArgs, '--import', 'tsx', file, ...args];
}
