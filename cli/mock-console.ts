// The terminal side of `mock --deliver-to`: commands on standard input that change the mock and send the events.
import type { DeliveryAttempt, Emission, MockService } from '../testing/mock-service/index.js';
import { errorCode, hintFor } from './hints.js';
import { type CliIo, SECRET_ENV } from './io.js';
import { reachAdvice } from './reach-failure.js';
import { shownBody } from './shown-body.js';

/**
 * Help text of the commands `mock --deliver-to` reads on standard input.
 * @example
 * io.stdout(CONSOLE_HELP);
 */
export const CONSOLE_HELP: string = `Commands (type one and press Enter; the id is optional, the first that fits is used):
  approve [leave request id]   approve leave awaiting a decision: leave.approved
  reject [leave request id]    reject leave awaiting a decision: leave.rejected
  cancel [leave request id]    withdraw approved leave: leave.cancelled
  exception [exception id]     approve a pending attendance exception: attendance.exception.approved
  report [YYYY-MM-DD]          run the absence report of today (the default) or a day before:
                               attendance.absence_report.completed
  test                         the settings page's Test action: webhook.test
  ids                          print the sample ids again
  help                         print this list
`;

const SHOWN = 3;

/**
 * Ids the mock serves that a user will want to try: leave by status, pending exceptions, reports, employees.
 * @example
 * io.stdout(sampleIds(service));
 */
export function sampleIds(service: MockService): string {
  const { state, organizationId } = service;
  const ours = new Set(state.employees.filter((e) => e.organizationId === organizationId).map((e) => e.id));
  const leave = state.leaveRequests.filter((r) => ours.has(r.employeeId));
  const line = (label: string, ids: readonly string[]): string =>
    `  ${label.padEnd(28)} ${ids.length === 0 ? 'none' : ids.slice(0, SHOWN).join(' ')}${ids.length > SHOWN ? ` (+${ids.length - SHOWN})` : ''}`;
  return [
    'Sample ids the mock serves:',
    line(
      'leave awaiting a decision',
      leave.filter((r) => r.statusId === 0 || r.statusId === 1).map((r) => r.id),
    ),
    line(
      'approved leave',
      leave.filter((r) => r.statusId === 2).map((r) => r.id),
    ),
    line(
      'pending exceptions',
      state.exceptions.filter((e) => ours.has(e.employeeId) && e.status === 'Pending').map((e) => e.id),
    ),
    line(
      'absence reports (reportId)',
      state.reports
        .filter((r) => r.organizationId === organizationId)
        .slice(-SHOWN)
        .map((r) => `${r.reportId} (${r.reportDate})`),
    ),
    line('employees', [...ours]),
    line(
      'leave types',
      state.leaveTypes.filter((t) => t.organizationId === organizationId).map((t) => t.id),
    ),
    '',
  ].join('\n');
}

/**
 * Reads commands from `io.lines()` until standard input ends, runs each against the mock and prints what was sent
 * and how the endpoint at `url` answered.
 * @example
 * await runConsole(service, io, 'http://localhost:3000/webhooks/workforce');
 */
export async function runConsole(service: MockService, io: CliIo, url?: string): Promise<void> {
  if (io.lines === undefined) return;
  for await (const raw of io.lines(io.signal)) {
    const [word = '', arg] = raw.trim().split(/\s+/);
    if (word === '') continue;
    try {
      const emission = await command(service, word.toLowerCase(), arg, io);
      if (emission !== undefined)
        io.stdout(describe(emission) + emission.attempts.map((a) => hintOnce(io, a, url)).join(''));
    } catch (error) {
      io.stdout(`! ${(error as Error).message.replace(/^workforce-webhooks mock: /, '')}\n`);
    }
  }
}

async function command(
  service: MockService,
  word: string,
  arg: string | undefined,
  io: CliIo,
): Promise<Emission | undefined> {
  const { state, organizationId } = service;
  const ours = (employeeId: string): boolean =>
    state.employees.some((e) => e.id === employeeId && e.organizationId === organizationId);
  const leaveWith = (statuses: readonly number[], what: string): string => {
    const row = state.leaveRequests.find((r) => ours(r.employeeId) && statuses.includes(r.statusId));
    if (row === undefined) throw new Error(`no ${what} leave request left; give an id`);
    return row.id;
  };
  switch (word) {
    case 'approve':
      return service.approveLeave(arg ?? leaveWith([0, 1], 'undecided'));
    case 'reject':
      return service.rejectLeave(arg ?? leaveWith([0, 1], 'undecided'));
    case 'cancel':
      return service.cancelLeave(arg ?? leaveWith([2], 'approved'));
    case 'exception': {
      const pending = state.exceptions.find((e) => ours(e.employeeId) && e.status === 'Pending');
      if (arg === undefined && pending === undefined)
        throw new Error('no pending exception left; give an id');
      return service.approveException(arg ?? pending!.id);
    }
    case 'report':
      // Without a day, the mock's own today.
      return service.completeAbsenceReport(arg);
    case 'test':
      return service.sendTest();
    case 'ids':
      io.stdout(sampleIds(service));
      return undefined;
    case 'help':
    case '?':
      io.stdout(CONSOLE_HELP);
      return undefined;
    default:
      throw new Error(`unknown command ${JSON.stringify(word)}; type help for the list`);
  }
}

/**
 * Prints each retry's outcome as it ends (the first attempt of an event is printed with the event itself).
 * @example
 * createMockService({ onAttempt: retryPrinter(io, 'http://localhost:3000/webhooks/workforce') });
 */
export function retryPrinter(io: CliIo, url?: string): (attempt: DeliveryAttempt) => void {
  return (attempt) => {
    if (attempt.attempt > 1)
      io.stdout(
        `-> ${attempt.type} (event ${attempt.eventId}) attempt ${attempt.attempt}: ${outcome(attempt)}\n${hintOnce(io, attempt, url)}`,
      );
  };
}

function describe({ event, attempts }: Emission): string {
  const ids = Object.entries(event.data as Record<string, unknown>)
    .filter(([key]) => key.endsWith('Id'))
    .map(([key, value]) => `${key} ${String(value)}`)
    .join(', ');
  const answers = attempts.map(outcome);
  return `-> ${event.type} (event ${event.id}${ids === '' ? '' : `; ${ids}`}): ${answers.join('; ') || 'no subscription'}\n`;
}

// How an attempt ended, from its ok/failed state: spec rules 2 and 5, only a 2xx in time is delivered.
function outcome(attempt: DeliveryAttempt): string {
  const { status, durationMs, ok, cancelled, error, retryInMs } = attempt;
  if (cancelled) return 'cancelled (the mock is stopping)';
  if (ok) return `${status} in ${durationMs} ms`;
  const next = retryInMs !== undefined ? `retry in ${duration(retryInMs)}` : 'no retries left';
  if (status === undefined) return `failed (${error ?? 'no answer'}), ${next}`;
  // The receiver's own error code, which names the cause; any other body is not shown (it may echo the signature).
  const code = receiverCode(attempt.body);
  if (code !== undefined) return `${status} ${code} in ${durationMs} ms: failed, ${next}`;
  const why =
    status >= 300 && status < 400
      ? 'a redirect counts as a failure; not followed'
      : 'only a 2xx counts as delivered';
  return `${status} in ${durationMs} ms: failed (${why}), ${next}`;
}

function duration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${Math.round(ms / 1000)} s`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min`;
  return `${Number((ms / 3_600_000).toFixed(1))} h`;
}

// The receiver's `{"error": code}` answer's code; undefined for any other body.
function receiverCode(body: string | undefined): string | undefined {
  return body !== undefined && shownBody(body).startsWith('{') ? errorCode(body) : undefined;
}

// The hints each console printed: a cause's hint once, however many deliveries and retries it fails.
const hinted = new WeakMap<CliIo, Set<string>>();

// What to look at first after a failed attempt, or undefined when nothing is known to say.
function hintOf(attempt: DeliveryAttempt, url: string | undefined): string | undefined {
  // No answer: the network error's code says the fix (nothing listening at the URL, a certificate not trusted).
  if (attempt.status === undefined)
    return attempt.code !== undefined && url !== undefined && URL.canParse(url)
      ? reachAdvice(attempt.code, new URL(url))
      : undefined;
  const body = attempt.body ?? '';
  // The endpoint's secret is not the one the mock signs with: say which to change, on either side.
  if (receiverCode(body) === 'signature_mismatch')
    return `the endpoint verifies with another secret than the mock signs with: run your server with ${SECRET_ENV} set to the mock's (printed above when it made one), or give the mock the server's with --secret or $${SECRET_ENV}`;
  return hintFor(attempt.status, body, '--deliver-to');
}

// The line after a failed attempt with what to look at first, the first time its cause is met; else nothing.
function hintOnce(io: CliIo, attempt: DeliveryAttempt, url: string | undefined): string {
  if (attempt.ok || attempt.cancelled) return '';
  const hint = hintOf(attempt, url);
  const seen = hinted.get(io) ?? new Set<string>();
  hinted.set(io, seen);
  if (hint === undefined || seen.has(hint)) return '';
  seen.add(hint);
  return `   hint: ${hint}\n`;
}
