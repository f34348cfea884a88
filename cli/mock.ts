// `workforce-webhooks mock`: the local Workforce Service, until interrupted.
import { createMockService } from '../testing/mock-service/index.js';
import { type CliIo, integer, parse, UsageError } from './io.js';

/**
 * Help text of `mock`.
 * @example
 * io.stdout(MOCK_USAGE);
 */
export const MOCK_USAGE = `Usage: workforce-webhooks mock [--port <port>] [--today YYYY-MM-DD]

Runs the mock Workforce Service on 127.0.0.1: the read API (Leave and Attendance) over fixture data,
with bearer keys scoped by organisation and permission and the 300 requests a minute limit. Prints the
base URL and the API keys, and runs until interrupted (Ctrl-C).

Options:
  --port        the port (default 4010; 0 picks a free one)
  --today       the mock's today, around which the fixtures are built (default today, UTC)
  -h, --help    show this help
`;

/**
 * Runs `mock`; resolves with the exit code once `io.signal` aborts.
 * @example
 * await mock(['--port', '4010'], io);
 */
export async function mock(argv: readonly string[], io: CliIo): Promise<number> {
  const { values } = parse(argv, { port: { type: 'string' }, today: { type: 'string' } });
  if (values.help) {
    io.stdout(MOCK_USAGE);
    return 0;
  }
  const port = integer(values.port, '--port', 4010);
  if (values.today !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(values.today))
    throw new UsageError('--today must be YYYY-MM-DD');
  const service = await createMockService({
    port,
    ...(values.today !== undefined ? { today: values.today } : {}),
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
  await new Promise<void>((resolve) => {
    if (io.signal === undefined || io.signal.aborted) return resolve();
    io.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  await service.close();
  return 0;
}
