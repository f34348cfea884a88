// `workforce-webhooks check`: a running endpoint against the spec's receiver rules, as a pass/fail table.
import { CHECK_MARKER, type CheckResult, runChecks } from './checks.js';
import { DATA_HELP, readData } from './data.js';
import { answerTimeout, eventType, TIMEOUT_HELP, typeTypo } from './delivery-options.js';
import { type CliIo, parse, required, SECRET_HELP, secretOf } from './io.js';
import { formatTable } from './table.js';
import { endpointUrl, fetchablePort } from './url.js';

/**
 * Help text of `check`.
 * @example
 * io.stdout(CHECK_USAGE);
 */
export const CHECK_USAGE: string = `Usage: workforce-webhooks check --url <url> [--secret <whsec_...>] [--timeout-ms 10000]

Checks a running endpoint against the Workforce Service's receiver rules, with real signed deliveries:
  - a forged and a stale signature are answered 400
  - a valid delivery is answered 2xx within the time limit (10 s)
  - the same event again, with a new delivery id, is answered 2xx (a refused duplicate is retried for two days)
  - an unknown event type is answered 2xx
  - no answer is a 3xx, also for the URL with or without a trailing slash
Prints a pass/fail table, then for each failure the answer's status and the receiver's error code (any other
body is not shown, only its size: run send to see it) and what to look at first, once for a cause several
checks share (a wrong secret, nothing listening); exits 1 when any check fails. Where no receiver answers
(nothing listens, no answer in time, a 404, an app's HTML page, a proxy's 502), every check fails, the trailing
slash and "no 3xx anywhere" too: there is nothing to judge. Every delivery's data
carries "${CHECK_MARKER}": true, so your handlers can skip them:
if ('${CHECK_MARKER}' in event.data) return;

Options:
  --url          the endpoint, http(s), without a user name or password
${SECRET_HELP}
${TIMEOUT_HELP}
  --type         the type of the valid deliveries (default webhook.test; printable ASCII, no spaces)
${DATA_HELP}
  -h, --help     show this help
`;

/**
 * Runs `check`; resolves with the exit code.
 * @example
 * await check(['--url', 'http://localhost:3000/webhooks/workforce', '--secret', 'whsec_test'], io);
 */
export async function check(argv: readonly string[], io: CliIo): Promise<number> {
  const { values } = parse(argv, {
    url: { type: 'string' },
    secret: { type: 'string' },
    'timeout-ms': { type: 'string' },
    type: { type: 'string' },
    data: { type: 'string' },
    'data-file': { type: 'string' },
  });
  if (values.help) {
    io.stdout(CHECK_USAGE);
    return 0;
  }
  const url = endpointUrl(required(values.url, '--url'), '--url');
  const type = values.type === undefined ? undefined : eventType(values.type);
  const secret = secretOf(values.secret, io);
  const timeoutMs = answerTimeout(values['timeout-ms']);
  const data = await readData(values.data, values['data-file']);
  fetchablePort(url, '--url');
  const typo = type === undefined ? undefined : typeTypo(type);
  if (typo !== undefined) io.stderr(`workforce-webhooks: ${typo}\n`);
  io.stderr(`Checking ${url}\n`);
  // Ctrl-C (or SIGTERM) mid-check ends the process as the signal would, after ending the open progress line, so the
  // shell's prompt does not land on "[3/6] ... ".
  let lineOpen = false;
  const interrupted = (signal: NodeJS.Signals): void => {
    if (lineOpen) io.stderr('interrupted\n');
    process.kill(process.pid, signal);
  };
  process.once('SIGINT', interrupted).once('SIGTERM', interrupted);
  let results: CheckResult[];
  try {
    results = await runChecks({
      url,
      secret,
      timeoutMs,
      ...(type !== undefined ? { type } : {}),
      ...(data !== undefined ? { data } : {}),
      onProgress(index, total, name, result) {
        lineOpen = result === undefined;
        if (result === undefined) io.stderr(`  [${index + 1}/${total}] ${name} ... `);
        else if (index < total - 1) io.stderr(`${result.answer}\n`);
      },
    });
  } finally {
    process.off('SIGINT', interrupted).off('SIGTERM', interrupted);
  }
  const shared = sharedCauses(results);
  io.stdout(
    formatTable([
      ['result', 'check', 'answer', 'reason'],
      ...results.map((r) => [
        r.ok ? 'PASS' : 'FAIL',
        r.name,
        r.answer,
        // A cause many checks share is told once, below: each row says only which rule it breaks.
        shared.has(causeOf(r)) ? `${r.rule}: see the cause below` : (r.reason ?? ''),
      ]),
    ]),
  );
  io.stdout(failures(results, shared));
  const failed = results.filter((r) => !r.ok).length;
  io.stdout(
    failed === 0
      ? `\nAll ${results.length} checks passed.\n`
      : `\n${failed} of ${results.length} checks failed.\n`,
  );
  return failed === 0 ? 0 : 1;
}

// What a failure's cause is told by: the endpoint's answer (or why there was none) and the hint read from it.
const causeOf = (r: CheckResult): string => `${r.cause ?? ''}\n${r.hint ?? ''}`;

/** The causes of more than one failure (a wrong secret refuses every valid delivery), each with its failures. */
function sharedCauses(results: readonly CheckResult[]): Map<string, CheckResult[]> {
  const byCause = new Map<string, CheckResult[]>();
  for (const r of results) {
    if (r.ok || r.cause === undefined) continue;
    byCause.set(causeOf(r), [...(byCause.get(causeOf(r)) ?? []), r]);
  }
  for (const [cause, group] of byCause) if (group.length < 2) byCause.delete(cause);
  return byCause;
}

/**
 * Each failure with the endpoint's answer (status, and the receiver's error code) and a hint, after the table; a
 * cause several failures share, once, naming them.
 */
function failures(results: readonly CheckResult[], shared: Map<string, CheckResult[]>): string {
  const blocks: string[] = [];
  const told = new Set<string>();
  for (const r of results) {
    if (r.ok) continue;
    const group = shared.get(causeOf(r));
    if (group !== undefined) {
      if (told.has(causeOf(r))) continue;
      told.add(causeOf(r));
      const answer =
        r.status !== undefined
          ? `answer: ${r.cause}`
          : r.cause!.startsWith('no answer')
            ? r.cause!
            : `no answer: ${r.cause}`;
      blocks.push(
        [
          `${group.map((g) => g.label).join(', ')} (${group.length} checks, one cause):`,
          `  ${answer}`,
          ...(r.hint !== undefined ? [`  hint:   ${r.hint}`] : []),
        ].join('\n'),
      );
    } else if (r.status !== undefined)
      blocks.push(
        [
          `${r.name}:`,
          `  answer: ${r.status} ${r.shownBody}`,
          ...(r.hint !== undefined ? [`  hint:   ${r.hint}`] : []),
        ].join('\n'),
      );
  }
  return blocks.length === 0 ? '' : `\nFailures:\n\n${blocks.join('\n\n')}\n`;
}
