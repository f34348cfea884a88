// `workforce-webhooks send`: one signed delivery to an endpoint, and its answer.
import { createSignedDelivery } from '../testing/index.js';
import { DATA_HELP, readData } from './data.js';
import { answerTimeout, eventId, eventType, TIMEOUT_HELP, typeTypo } from './delivery-options.js';
import { hintFor } from './hints.js';
import { isHtmlPage, PAGE_HINT } from './html-page.js';
import { type CliIo, parse, required, SECRET_HELP, secretOf } from './io.js';
import { postDelivery } from './post.js';
import { printedBody } from './shown-body.js';
import { shownLocation } from './shown-location.js';
import { endpointUrl, fetchablePort } from './url.js';

/**
 * Help text of `send`.
 * @example
 * io.stdout(SEND_USAGE);
 */
export const SEND_USAGE: string = `Usage: workforce-webhooks send --url <url> --type <event type> [--secret <whsec_...>] [--data '<json>']

Sends one delivery signed like the Workforce Service's and prints the answer. Exits 0 on a 2xx answer,
1 otherwise, and on a 2xx that is an HTML page (an app's fallback for a path it has no route for: no
receiver saw it). Without --data, the data is a realistic sample of the type: leave.approved with the
spec's seven fields, attendance.absence_report.completed with a reportId, the other named types with the
ids of their area and "sample": true.

Options:
  --url          the endpoint, http(s), without a user name or password
  --type         the event type, e.g. leave.approved (printable ASCII, no spaces: it is a header)
${SECRET_HELP}
${DATA_HELP}
  --id           the event id, a uuid (default: a new one; reuse one to send a redelivery)
${TIMEOUT_HELP}
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
    'data-file': { type: 'string' },
    id: { type: 'string' },
    'timeout-ms': { type: 'string' },
  });
  if (values.help) {
    io.stdout(SEND_USAGE);
    return 0;
  }
  const url = endpointUrl(required(values.url, '--url'), '--url');
  const type = eventType(required(values.type, '--type'));
  const id = values.id === undefined ? undefined : eventId(values.id);
  const secret = secretOf(values.secret, io);
  const timeoutMs = answerTimeout(values['timeout-ms']);
  const data = await readData(values.data, values['data-file']);
  fetchablePort(url, '--url');
  const delivery = await createSignedDelivery({
    secret,
    type,
    ...(data !== undefined ? { data } : {}),
    ...(id !== undefined ? { id } : {}),
  });
  const typo = typeTypo(type);
  if (typo !== undefined) io.stderr(`workforce-webhooks: ${typo}\n`);
  if (data === undefined)
    io.stderr(
      `Sending sample data (--data or --data-file for your own): ${JSON.stringify(delivery.event.data)}\n`,
    );
  const result = await postDelivery(url, delivery, timeoutMs);
  if ('error' in result) {
    // A slow answer is the service's failed delivery too: say so, and what makes an endpoint answer in time.
    const slow = result.error.startsWith('no answer within')
      ? ": the service counts a slower answer as failed and sends it again; answer 2xx first and do the work after, as the receiver's default mode: 'queue' does"
      : '';
    io.stderr(`workforce-webhooks: ${result.error}${slow}\n`);
    return 1;
  }
  io.stdout(
    `HTTP ${result.status} in ${result.ms} ms (event ${delivery.event.id})\n${printedBody(result.body, result.truncated)}\n`,
  );
  // The status alone reads like an answer; the service follows no redirect, so for it this delivery failed.
  if (result.status >= 300 && result.status < 400) {
    const to = result.location === undefined ? '' : ` to ${shownLocation(result.location, url)}`;
    io.stderr(
      `workforce-webhooks: a redirect${to}: the service does not follow redirects, so this delivery failed (spec rule 5); give --url the exact URL your receiver answers at\n`,
    );
  } else if (isHtmlPage(result.status, result.body)) {
    // The service counts this 2xx as delivered, and no handler ever ran: the silent drop to catch before going live.
    io.stderr(`workforce-webhooks: a 2xx with an HTML page, not a receiver's answer: ${PAGE_HINT}\n`);
    return 1;
  } else if (result.status >= 400) {
    // As `check` and `mock` do: a refusal of a delivery known to be valid says what to look at first.
    const hint = hintFor(result.status, result.body, '--url', { url, secret });
    if (hint !== undefined) io.stderr(`workforce-webhooks: ${hint}\n`);
  }
  return result.status >= 200 && result.status < 300 ? 0 : 1;
}
