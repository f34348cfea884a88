// `workforce-webhooks send`: one signed delivery to an endpoint, and its answer.
import { createSignedDelivery } from '../testing/index.js';
import { type CliIo, integer, parse, required, UsageError } from './io.js';
import { postDelivery } from './post.js';

/**
 * Help text of `send`.
 * @example
 * io.stdout(SEND_USAGE);
 */
export const SEND_USAGE = `Usage: workforce-webhooks send --url <url> --secret <whsec_...> --type <event type> [--data '<json>']

Sends one delivery signed like the Workforce Service's and prints the answer. Exits 0 on a 2xx answer,
1 otherwise.

Options:
  --url          the endpoint
  --secret       the endpoint's signing secret
  --type         the event type, e.g. leave.approved
  --data         the event's data as a JSON object (default {})
  --id           the event id (default: a new uuid; reuse one to send a redelivery)
  --timeout-ms   how long to wait for the answer (default 10000, the service's limit)
  -h, --help     show this help
`;

/**
 * Runs `send`; resolves with the exit code.
 * @example
 * await send(['--url', url, '--secret', 'whsec_test', '--type', 'leave.approved'], io);
 */
export async function send(argv: readonly string[], io: CliIo): Promise<number> {
  const { values } = parse(argv, {
    url: { type: 'string' },
    secret: { type: 'string' },
    type: { type: 'string' },
    data: { type: 'string' },
    id: { type: 'string' },
    'timeout-ms': { type: 'string' },
  });
  if (values.help) {
    io.stdout(SEND_USAGE);
    return 0;
  }
  const url = required(values.url, '--url');
  const secret = required(values.secret, '--secret');
  const type = required(values.type, '--type');
  const timeoutMs = integer(values['timeout-ms'], '--timeout-ms', 10_000);
  let data: Record<string, unknown> = {};
  if (values.data !== undefined) {
    try {
      data = JSON.parse(values.data);
    } catch {
      throw new UsageError('--data must be a JSON object');
    }
    if (typeof data !== 'object' || data === null || Array.isArray(data))
      throw new UsageError('--data must be a JSON object');
  }
  const delivery = await createSignedDelivery({
    secret,
    type,
    data,
    ...(values.id ? { id: values.id } : {}),
  });
  const result = await postDelivery(url, delivery, timeoutMs);
  if ('error' in result) {
    io.stderr(`workforce-webhooks: ${result.error}\n`);
    return 1;
  }
  io.stdout(`HTTP ${result.status} in ${result.ms} ms (event ${delivery.event.id})\n${result.body}\n`);
  return result.status >= 200 && result.status < 300 ? 0 : 1;
}
