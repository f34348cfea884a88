// `workforce-webhooks sign`: the Svc-Signature header of the body on standard input.
import { ConfigurationError } from '../src/errors.js';
import { signPayload } from '../src/signature.js';
import { type CliIo, integer, parse, SECRET_HELP, secretOf, UsageError } from './io.js';

/**
 * Help text of `sign`.
 * @example
 * io.stdout(SIGN_USAGE);
 */
export const SIGN_USAGE: string = `Usage: workforce-webhooks sign [--secret <whsec_...>] [--timestamp <unix seconds>] < body.json

Prints the Svc-Signature header for the exact bytes on standard input (a trailing newline is part of
the body: use printf or a file written without one to sign what you will send). At most 1 MiB, a
receiver's default body limit.

Options:
${SECRET_HELP}
  --timestamp    the signature's t, in unix seconds, at most 12 digits (default: now)
  -h, --help     show this help
`;

// What a receiver parses as the signature's t (spec "Signature"): no sign, no fraction, no exponent.
const TIMESTAMP_TAKES = 'unix seconds, a whole number of at most 12 digits, e.g. 1700000000';

/**
 * Runs `sign`; resolves with the exit code.
 * @example
 * await sign(['--secret', 'whsec_test'], io);
 */
export async function sign(argv: readonly string[], io: CliIo): Promise<number> {
  const { values } = parse(
    argv,
    { secret: { type: 'string' }, timestamp: { type: 'string' } },
    { timestamp: TIMESTAMP_TAKES },
  );
  if (values.help) {
    io.stdout(SIGN_USAGE);
    return 0;
  }
  const secret = secretOf(values.secret, io);
  const timestamp = integer(values.timestamp, '--timestamp', Math.floor(Date.now() / 1000));
  const payload = await io.stdin();
  let header: string;
  try {
    header = await signPayload({ payload, secret, timestamp });
  } catch (error) {
    // signPayload holds the rule of t a receiver parses (unix seconds, at most 12 digits); the secret is already
    // known non-empty, so its refusal here is of --timestamp, said in the option's words.
    if (error instanceof ConfigurationError)
      throw new UsageError(`--timestamp must be unix seconds of at most 12 digits, got ${values.timestamp}`);
    throw error;
  }
  io.stdout(`${header}\n`);
  return 0;
}
