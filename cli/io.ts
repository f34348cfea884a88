// What the CLI reads and writes, passed in so tests run it in-process with their own streams.
import { createInterface } from 'node:readline';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { SECRET_ENV } from '../src/secret-source.js';
import { MAX_BODY_BYTES, readBounded } from './body-limit.js';

/** The CLI's outside world. */
export interface CliIo {
  stdout(text: string): void;
  /** Progress and errors. */
  stderr(text: string): void;
  /** The whole of standard input, as bytes. */
  stdin(): Promise<Uint8Array>;
  /** Standard input line by line, as typed (`mock --deliver-to` reads commands there), until `signal` aborts. */
  lines?(signal?: AbortSignal): AsyncIterable<string>;
  /** The environment (`WORKFORCE_WEBHOOK_SECRET`); default none. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Whether a person can answer on standard input (a terminal): commands that ask a confirmation need one. */
  readonly interactive?: boolean;
  /** Aborted to stop a long-running command (`mock`): SIGINT / SIGTERM in the real CLI. */
  readonly signal?: AbortSignal;
}

/**
 * A mistake in how the CLI was called: one line, exit code 2.
 * @example
 * throw new UsageError('--url is required');
 */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/**
 * `parseArgs` in strict mode, with its errors turned into one-line `UsageError`s; `takes` says what an option's
 * value is (by name without dashes), for the error of a missing one.
 * @example
 * const { values } = parse(argv, { secret: { type: 'string' } });
 */
export function parse<O extends NonNullable<ParseArgsConfig['options']>>(
  argv: readonly string[],
  options: O,
  takes: Readonly<Record<string, string>> = {},
): ReturnType<
  typeof parseArgs<{ args: string[]; options: O & { help: { type: 'boolean'; short: 'h' } }; strict: true }>
> {
  try {
    return parseArgs({
      args: [...argv],
      options: { ...options, help: { type: 'boolean', short: 'h' } },
      strict: true,
    });
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    // A signing secret typed without --secret is an unexpected argument: say so without quoting it on stderr.
    const unexpected =
      code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL' ? /'(.*)'/s.exec(message)?.[1] : undefined;
    if (unexpected !== undefined && looksLikeSecret(unexpected))
      throw new UsageError(
        `Unexpected argument (a signing secret, not shown): give it in $${SECRET_ENV}, or after --secret`,
      );
    // A value missing, or one starting with a dash (`--timestamp -5`): Node's words name neither what the option
    // takes nor how to give such a value. The value itself is not quoted: it may be a secret.
    const option =
      code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' ? /'(--[\w-]+)/.exec(message)?.[1] : undefined;
    if (option !== undefined) {
      const what = takes[option.slice(2)];
      const takesWhat = what === undefined ? '' : `: it takes ${what}`;
      throw new UsageError(
        message.includes('ambiguous')
          ? `${option} is followed by an argument starting with a dash, not by its value${takesWhat} (write ${option}=<value> for a value that starts with a dash)`
          : `${option} argument missing${takesWhat}`,
      );
    }
    throw new UsageError(message.split('\n')[0]!);
  }
}

// The service's signing secrets start with whsec_ (spec "Subscription" 2).
const looksLikeSecret = (arg: string): boolean => arg.startsWith('whsec_');

/**
 * A required option, or a `UsageError` naming it.
 * @example
 * const secret = required(values.secret, '--secret');
 */
export function required(value: string | undefined, name: string): string {
  if (value === undefined || value === '') throw new UsageError(`${name} is required`);
  return value;
}

// The environment variable `--secret` falls back to: the one the receiver's error message names.
export { SECRET_ENV };

/**
 * Help lines of `--secret`, the same in every command that signs.
 * @example
 * `Options:\n${SECRET_HELP}`
 */
export const SECRET_HELP: string = `  --secret       the endpoint's signing secret; default $${SECRET_ENV}. Prefer the variable: a secret
                 typed on the command line lands in your shell history`;

/**
 * `--secret`, else `$WORKFORCE_WEBHOOK_SECRET`, else a `UsageError` naming both; one padded or quoted is warned of.
 * @example
 * const secret = secretOf(values.secret, io);
 */
export function secretOf(value: string | undefined, io: CliIo): string {
  const secret = value ?? io.env?.[SECRET_ENV];
  if (secret === undefined || secret === '') throw new UsageError(`--secret (or $${SECRET_ENV}) is required`);
  const from = value !== undefined ? '--secret' : `$${SECRET_ENV}`;
  if (secret.trim() === '')
    throw new UsageError(
      `${from} is only whitespace: pass the endpoint's whsec_ secret, as shown when it was added`,
    );
  // Signed with as given, as the receiver verifies with its secret as given; but a copy from a .env file that kept
  // its quotes or a \r signs what no receiver fed by a .env loader expects, and a bare signature_mismatch hides why.
  const shape =
    secret.trim() !== secret
      ? 'has leading or trailing whitespace (a stray newline or \\r, as copied from a .env file?); it signs as given, whitespace included, so only a receiver given the same value accepts it: remove the whitespace where the value is set'
      : secret.length >= 2 && /^(".*"|'.*')$/s.test(secret)
        ? 'is wrapped in quotes (as copied from a .env file); it signs as given, quotes included, so only a receiver given the same value accepts it: remove the quotes where the value is set'
        : undefined;
  if (shape !== undefined) io.stderr(`workforce-webhooks: warning: ${from} ${shape}\n`);
  return secret;
}

/**
 * A whole number option, or a `UsageError`.
 * @example
 * const timeoutMs = integer(values['timeout-ms'], '--timeout-ms', 10_000);
 */
export function integer(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value))
    throw new UsageError(`${name} must be a whole number, got ${JSON.stringify(value)}`);
  return Number(value);
}

/**
 * The real process: stdout, stderr, stdin, and a signal aborted on SIGINT or SIGTERM.
 * @example
 * process.exitCode = await runCli(process.argv.slice(2), processIo());
 */
export function processIo(): CliIo {
  let controller: AbortController | undefined;
  // A reader that leaves early (`| head`) makes the next write fail with EPIPE, an 'error' event that would crash the
  // command with a stack trace: its output is dropped instead, and the command finishes what it does (a replay).
  const open = { stdout: true, stderr: true };
  for (const name of ['stdout', 'stderr'] as const)
    process[name].on('error', () => {
      open[name] = false;
    });
  return {
    stdout: (text) => open.stdout && process.stdout.write(text),
    stderr: (text) => open.stderr && process.stderr.write(text),
    async stdin() {
      if (process.stdin.isTTY) throw new UsageError('pipe the body on standard input, e.g. < body.json');
      const body = await readBounded(process.stdin, MAX_BODY_BYTES);
      if (body === undefined)
        throw new UsageError(
          'standard input is over 1 MiB, more than a receiver takes (its default maxBodyBytes): sign a smaller body',
        );
      return body;
    },
    lines(signal) {
      const reader = createInterface({ input: process.stdin, terminal: false });
      // Closing it releases standard input, so the process can end once the command is done.
      signal?.addEventListener('abort', () => reader.close(), { once: true });
      return reader;
    },
    env: process.env,
    interactive: process.stdin.isTTY === true,
    // Installed only by a command that asks for it (`mock`), so Ctrl-C still ends the others at once.
    get signal() {
      if (controller === undefined) {
        const created = new AbortController();
        for (const name of ['SIGINT', 'SIGTERM'] as const) process.once(name, () => created.abort());
        controller = created;
      }
      return controller.signal;
    },
  };
}
