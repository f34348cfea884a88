// `workforce-webhooks sign`: the Svc-Signature header of the body on standard input.
import { signPayload } from '../src/signature.js';
import { type CliIo, integer, parse, SECRET_HELP, secretOf, UsageError } from './io.js';

/**
 * Help text of `sign`.
 * @example
 * io.stdout(SIGN_USAGE);
 */
export const SIGN_USAGE: string = `Usage: workforce-webhooks sign [--secret <whsec_...>] [--timestamp <unix seconds>] < body.json

Prints the Svc-Signature header for the exact bytes on standard input (a trailing newline is part of
the body: use printf or a file written without one to sign what you will send).

Options:
${SECRET_HELP}
  --timestamp    the signature's t, in unix seconds, at most 12 digits (default: now)
  -h, --help     show this help
`;

/**
 * Runs `sign`; resolves with the exit code.
 * @example
 * await sign(['--secret', 'whsec_test'], io);
 */
export async function sign(argv: readonly string[], io: CliIo): Promise<number> {
  const { values } = parse(argv, { secret: { type: 'string' }, timestamp: { type: 'string' } });
  if (values.help) {
    io.stdout(SIGN_USAGE);
    return 0;
  }
  const secret = secretOf(values.secret, io);
  const timestamp = integer(values.timestamp, '--timestamp', Math.floor(Date.now() / 1000));
  // A receiver refuses a longer t as a malformed header (spec "Signature": t is unix seconds).
  if (timestamp > 999_999_999_999)
    throw new UsageError(`--timestamp must be unix seconds of at most 12 digits, got ${values.timestamp}`);
  io.stdout(`${await signPayload({ payload: await io.stdin(), secret, timestamp })}\n`);
  return 0;
}
