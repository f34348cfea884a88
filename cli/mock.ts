// `workforce-webhooks mock`: the local Workforce Service, until interrupted.
import { isRefusedPort, refusedPortWords } from '../api/bad-port.js';
import { isCalendarDate } from '../api/dates.js';
import { createMockService } from '../testing/mock-service/index.js';
import { type CliIo, integer, parse, SECRET_ENV, secretOf, UsageError } from './io.js';
import { CONSOLE_HELP, retryPrinter, runConsole, sampleIds } from './mock-console.js';
import { endpointUrl, fetchablePort } from './url.js';

/**
 * Help text of `mock`.
 * @example
 * io.stdout(MOCK_USAGE);
 */
export const MOCK_USAGE: string = `Usage: workforce-webhooks mock [--port <port>] [--today YYYY-MM-DD] [--deliver-to <url> [--secret <whsec_...>]]

Runs the mock Workforce Service on 127.0.0.1: the read API (Leave and Attendance) over fixture data,
with bearer keys scoped by organisation and permission and the 300 requests a minute limit. Prints the
base URL, the API keys and sample ids it serves, and runs until interrupted (Ctrl-C).

With --deliver-to, it also sends its events to your endpoint, signed and retried like the service's,
and reads commands on standard input to make them happen: approve, reject or cancel leave, approve an
attendance exception, run an absence report (type help once it runs). It prints how each attempt ended:
only a 2xx within 10 s is delivered; anything else, a 3xx included, failed and is retried (1 min, then longer).

Options:
  --port         the port (default 4010; 0 picks a free one)
  --today        the mock's today, around which the fixtures are built (default today, UTC)
  --deliver-to   your webhook endpoint's URL, http(s), without a user name or password
  --secret       the secret to sign with; default $${SECRET_ENV}, else a new one, printed. Prefer the
                 variable: a secret typed on the command line lands in your shell history
  -h, --help     show this help
`;

/**
 * Runs `mock`; resolves with the exit code once `io.signal` aborts.
 * @example
 * await mock(['--port', '4010'], io);
 */
export async function mock(argv: readonly string[], io: CliIo): Promise<number> {
  const { values } = parse(argv, {
    port: { type: 'string' },
    today: { type: 'string' },
    'deliver-to': { type: 'string' },
    secret: { type: 'string' },
  });
  if (values.help) {
    io.stdout(MOCK_USAGE);
    return 0;
  }
  const port = integer(values.port, '--port', 4010);
  // The mock would listen there, and then no fetch, the API client's included, could reach it.
  if (isRefusedPort(port))
    throw new UsageError(
      `--port: ${refusedPortWords(port)}, so no client could reach the mock; pick another`,
    );
  if (port > 65_535) throw new UsageError(`--port must be 0 to 65535, got ${port}`);
  // A real day, not only its shape: 2026-02-30 would build fixtures around a day the calendar lacks.
  if (values.today !== undefined && !isCalendarDate(values.today))
    throw new UsageError(`--today ${values.today} is not a real day; give one written YYYY-MM-DD`);
  const deliverTo =
    values['deliver-to'] === undefined ? undefined : endpointUrl(values['deliver-to'], '--deliver-to');
  if (deliverTo === undefined && values.secret !== undefined)
    throw new UsageError('--secret signs what --deliver-to sends: give --deliver-to too');
  if (deliverTo !== undefined) fetchablePort(deliverTo, '--deliver-to');
  // Optional here (none makes a new one), but one given is checked as `send` checks it, before the mock starts: a
  // padded or quoted copy from a .env file would otherwise fail every delivery with a bare signature_mismatch.
  const given =
    deliverTo !== undefined && (values.secret || io.env?.[SECRET_ENV])
      ? secretOf(values.secret || undefined, io)
      : undefined;
  // Ctrl-C (SIGINT, SIGTERM) is taken before anything is printed: one that comes as the base URL shows would
  // otherwise end the process the default way, the port not closed and the exit code not 0.
  const interrupt = io.signal;
  const service = await createMockService({
    port,
    ...(values.today !== undefined ? { today: values.today } : {}),
    // Retries come a minute and more after the event: each one's outcome is printed when it ends.
    ...(deliverTo !== undefined ? { onAttempt: retryPrinter(io, deliverTo) } : {}),
  }).catch((error: NodeJS.ErrnoException) => {
    throw new UsageError(
      error.code === 'EADDRINUSE' ? `port ${port} is in use; pick another with --port` : error.message,
    );
  });
  const keys = Object.entries(service.apiKeys).map(([name, key]) => `  ${name.padEnd(18)} ${key}`);
  io.stdout(
    `Mock Workforce Service running\n  base URL           ${service.baseUrl}\n  organization       ${service.organizationId}\nAPI keys:\n${keys.join('\n')}\n` +
      '(full: Leave + Attendance; leave / attendance: one each; people: neither; otherOrganization: another organisation)\n',
  );
  io.stdout(sampleIds(service));
  if (deliverTo !== undefined) {
    const { secret } = service.subscribe(deliverTo, given ? { secret: given } : {});
    // A secret the user gave is theirs: never echo it. A new one must be shown, or nothing could verify.
    io.stdout(
      `Delivering every event to ${deliverTo}, signed with ${given ? `the secret from ${values.secret ? '--secret' : `$${SECRET_ENV}`}` : `a new secret: ${secret}`}\n${CONSOLE_HELP}`,
    );
    void runConsole(service, io, deliverTo);
  }
  await new Promise<void>((resolve) => {
    if (interrupt === undefined || interrupt.aborted) return resolve();
    interrupt.addEventListener('abort', () => resolve(), { once: true });
  });
  await service.close();
  return 0;
}
