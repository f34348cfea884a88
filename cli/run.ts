// The CLI's dispatcher: one command per file, `--help` everywhere, errors as one line and a non-zero exit.
import { ConfigurationError } from '../src/errors.js';
import { CHECK_USAGE, check } from './check.js';
import { DEAD_LETTERS_USAGE, deadLetters } from './dead-letters.js';
import { type CliIo, UsageError } from './io.js';
import { MIGRATE_USAGE, migrate } from './migrate.js';
import { MOCK_USAGE, mock } from './mock.js';
import { SEND_USAGE, send } from './send.js';
import { SIGN_USAGE, sign } from './sign.js';
import { redactUrl } from './url.js';
import { packageVersion } from './version.js';

/**
 * Help text of the CLI.
 * @example
 * io.stdout(USAGE);
 */
export const USAGE = `Usage: workforce-webhooks <command> [options]

Commands:
  sign          print the Svc-Signature header of the body on standard input
  send          send one signed delivery to an endpoint and print the answer
  check         check a running endpoint against the spec's receiver rules
  mock          run the mock Workforce Service (read API) and print its keys
  migrate       create the Postgres store's table (workforce-webhooks/postgres)
  dead-letters  list, replay or discard a deployed BullMQ queue's dead letters

Run workforce-webhooks <command> --help for a command's options; --version prints the version.
`;

const commands: Record<
  string,
  { run: (argv: readonly string[], io: CliIo) => Promise<number>; usage: string }
> = {
  sign: { run: sign, usage: SIGN_USAGE },
  send: { run: send, usage: SEND_USAGE },
  check: { run: check, usage: CHECK_USAGE },
  mock: { run: mock, usage: MOCK_USAGE },
  migrate: { run: migrate, usage: MIGRATE_USAGE },
  'dead-letters': { run: deadLetters, usage: DEAD_LETTERS_USAGE },
};

/**
 * Runs the CLI with `argv` (without node and the script) and resolves with the exit code: 0 success,
 * 1 a failed check or request, 2 a usage mistake.
 * @example
 * process.exitCode = await runCli(process.argv.slice(2), processIo());
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-v' || name === 'version') {
    io.stdout(`${packageVersion()}\n`);
    return 0;
  }
  // `help <command>` is `<command> --help`; `help --help` the overview.
  const topic = name === 'help' && rest[0] !== '--help' && rest[0] !== '-h' ? rest[0] : undefined;
  if (name === undefined || name === '--help' || name === '-h' || (name === 'help' && topic === undefined)) {
    io.stdout(USAGE);
    return 0;
  }
  const command = commands[topic ?? name];
  try {
    if (command === undefined)
      throw new UsageError(
        `unknown command ${JSON.stringify(topic ?? name)}; commands: ${Object.keys(commands).join(', ')}`,
      );
    if (topic !== undefined) {
      io.stdout(command.usage);
      return 0;
    }
    return await command.run(rest, io);
  } catch (error) {
    // The library's ConfigurationError here comes of an option's value (a --timestamp, a --table, a --cursor).
    const usage = error instanceof UsageError || error instanceof ConfigurationError;
    const hint = usage
      ? ` (see workforce-webhooks ${command === undefined ? '' : `${topic ?? name} `}--help)`
      : '';
    io.stderr(`workforce-webhooks: error: ${printable((error as Error).message)}${hint}\n`);
    return usage ? 2 : 1;
  }
}

// One prefix (the library's messages bring their own), and no secret: neither a whsec_ secret typed in the wrong
// place nor a URL's password is echoed on stderr.
const printable = (message: string): string =>
  redactUrl(message.replace(/^workforce-webhooks: /, '')).replace(/whsec_[^\s'"]+/g, 'whsec_***');
