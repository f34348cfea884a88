// The CLI from source as a real child process (`node --import tsx cli/index.ts`), its output collected.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { once } from 'node:events';
import { root } from '../support/packed.js';

/** A running CLI process, with what it printed so far on each stream. */
export type CliProcess = ChildProcessWithoutNullStreams & { out: () => string; err: () => string };

/**
 * Starts the CLI with `args` in the repository root; `env` default this process's environment.
 * @example
 * const child = startCli(['mock', '--port', '0']);
 */
export function startCli(args: readonly string[], env?: NodeJS.ProcessEnv): CliProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'cli/index.ts', ...args], { cwd: root, env });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    err += chunk;
  });
  return Object.assign(child, { out: () => out, err: () => err });
}

/**
 * Runs the CLI to its end, standard input closed (not a terminal), as a script or a CI job runs it.
 * @example
 * const { code, out, err } = await runCliProcess(['--version']);
 */
export async function runCliProcess(
  args: readonly string[],
  env?: NodeJS.ProcessEnv,
): Promise<{ code: number; out: string; err: string }> {
  const child = startCli(args, env);
  child.stdin.end();
  const [code] = (await once(child, 'close')) as [number];
  return { code, out: child.out(), err: child.err() };
}
