// The receiver rules of the spec as checks against a running endpoint, one signed delivery each.
import { createSignedDelivery, type SignedDelivery, sampleEventData } from '../testing/index.js';
import { redactUrl } from '../testing/mock-service/url.js';
import { errorCode, hintFor } from './hints.js';
import { isHtmlPage, PAGE_HINT } from './html-page.js';
import { type PostResult, postDelivery } from './post.js';
import { shownBody } from './shown-body.js';
import { shownLocation } from './shown-location.js';

/** The outcome of one check: the answer seen and, on failure, why it breaks the spec. */
export interface CheckResult {
  readonly name: string;
  /** A short name of the check (`valid delivery`), for a cause several checks share. */
  readonly label?: string;
  readonly ok: boolean;
  /** `202 in 12 ms`, or what happened instead. */
  readonly answer: string;
  readonly reason?: string;
  /** The endpoint's answer, when there was one: its status and the start of its body. */
  readonly status?: number;
  readonly body?: string;
  /** What `check` prints of the body: the receiver's `{"error": code}` answer as sent, else only its size. */
  readonly shownBody?: string;
  /** On failure, what to look at first, read from the answer (`signature_mismatch`, `raw_body_unavailable`...). */
  readonly hint?: string;
  /** On failure, the rule broken in a few words (`expected 2xx (spec rule 2)`), for a row whose cause is told below. */
  readonly rule?: string;
  /**
   * On failure, what the endpoint did, in the same words whichever check it did it to (`400 {"error":...}`, no
   * answer and why): failures with one cause share it, so `check` tells that cause once.
   */
  readonly cause?: string;
}

/**
 * The field `check` adds to the data of each of its deliveries, so an `onAny` handler can skip them:
 * `if (CHECK_MARKER in event.data) return;`.
 * @example
 * receiver.onAny((event) => { if ('workforceWebhooksCheck' in event.data) return; audit(event); });
 */
export const CHECK_MARKER = 'workforceWebhooksCheck';

/** Options of `runChecks`. */
export interface CheckOptions {
  readonly url: string;
  readonly secret: string;
  /** The answer-time limit; default 10 000 (spec rule 2). */
  readonly timeoutMs?: number;
  /** The type of the valid deliveries; default `webhook.test` (what the service's Test action sends). */
  readonly type?: string;
  /** The data of the valid deliveries; default the type's sample. `workforceWebhooksCheck: true` is added. */
  readonly data?: Record<string, unknown>;
  /** Called before each check (`name`) and after it (`result`). */
  readonly onProgress?: (index: number, total: number, name: string, result?: CheckResult) => void;
}

type Check = {
  readonly name: string;
  /** A short name for the summary of redirects. */
  readonly label: string;
  /** The rule a failure breaks, in a few words. */
  readonly rule: string;
  readonly delivery: () => Promise<SignedDelivery<string>>;
  readonly url?: string;
  /** Why the answer breaks the rule, or undefined when it keeps it. */
  readonly judge: (status: number) => string | undefined;
};

const is2xx = (status: number): boolean => status >= 200 && status < 300;

/**
 * Runs every check in order and resolves with their results (the last is "no 3xx anywhere").
 * @example
 * const results = await runChecks({ url: 'http://localhost:3000/webhooks/workforce', secret: 'whsec_...' });
 */
export async function runChecks({
  url,
  secret,
  timeoutMs = 10_000,
  type = 'webhook.test',
  data: given,
  onProgress,
}: CheckOptions): Promise<CheckResult[]> {
  // Marked, so the endpoint's own handlers can tell check's deliveries from the service's.
  const data = { ...(given ?? sampleEventData(type)), [CHECK_MARKER]: true };
  const valid = await createSignedDelivery({ secret, type, data });
  // The same path with its trailing slash toggled; the query and fragment stay where they are.
  const toggled = new URL(url);
  toggled.pathname = toggled.pathname.endsWith('/') ? toggled.pathname.slice(0, -1) : `${toggled.pathname}/`;
  const slash = toggled.href;
  const checks: Check[] = [
    // A valid delivery first: refusals among verified deliveries are normal traffic, so the receiver's log stays
    // quiet (its first refusal before any verified delivery is reported, as a wrong secret looks like that).
    {
      name: `valid delivery answered 2xx within ${timeoutMs} ms`,
      label: 'valid delivery',
      rule: 'expected 2xx (spec rule 2)',
      delivery: async () => valid,
      judge: (s) =>
        is2xx(s)
          ? undefined
          : `answered ${s} to a valid delivery; the service counts it as failed and sends it again (spec rule 2)`,
    },
    {
      name: 'same event again (new delivery id) answered 2xx',
      label: 'same event again',
      rule: 'expected 2xx (spec rule 3)',
      // A redelivery: the same event (the same body bytes), a new delivery id and signature time.
      delivery: () =>
        createSignedDelivery({ secret, type, data, id: valid.event.id, occurredAt: valid.event.occurredAt }),
      judge: (s) =>
        is2xx(s)
          ? undefined
          : `answered ${s} to a repeat of a handled event; a refused duplicate is retried for two days: skip it and answer 2xx (spec rule 3)`,
    },
    {
      name: 'forged signature is refused with 400',
      label: 'forged signature',
      rule: 'expected 400 (spec rule 1)',
      delivery: () => createSignedDelivery({ secret: `${secret}_forged`, type, data }),
      judge: (s) =>
        is2xx(s)
          ? `accepted a forged signature: check the signature before trusting the request (spec rule 1)`
          : s !== 400
            ? `answered ${s}, expected 400 (spec rule 1)`
            : undefined,
    },
    {
      name: 'stale signature (1 h old) is refused with 400',
      label: 'stale signature',
      rule: 'expected 400 (spec "Signature" 4)',
      delivery: () =>
        createSignedDelivery({ secret, type, data, timestamp: Math.floor(Date.now() / 1000) - 3600 }),
      judge: (s) =>
        is2xx(s)
          ? 'accepted a signature an hour old: check the timestamp tolerance (spec "Signature" 4)'
          : s !== 400
            ? `answered ${s}, expected 400`
            : undefined,
    },
    {
      name: 'unknown event type answered 2xx',
      label: 'unknown type',
      rule: 'expected 2xx (new types come over time)',
      delivery: () =>
        createSignedDelivery({ secret, type: `check.unknown_${Date.now()}`, data: { [CHECK_MARKER]: true } }),
      judge: (s) =>
        is2xx(s)
          ? undefined
          : `answered ${s} to an event type it does not know; new types are added over time, answer 2xx`,
    },
    {
      name: `no redirect for ${new URL(slash).pathname}`,
      label: 'trailing slash',
      rule: 'expected an answer, not a 3xx (spec rule 5)',
      url: slash,
      delivery: () => createSignedDelivery({ secret, type, data }),
      // Any answer but a 3xx: the service sends to the exact URL, this only catches trailing-slash redirects.
      judge: () => undefined,
    },
  ];
  const results: CheckResult[] = [];
  const redirects: Redirect[] = [];
  for (const [index, check] of checks.entries()) {
    onProgress?.(index, checks.length + 1, check.name);
    const answer = await postDelivery(check.url ?? url, await check.delivery(), timeoutMs);
    const result = judge(check, check.url ?? url, answer, redirects, secret);
    results.push(result);
    onProgress?.(index, checks.length + 1, check.name, result);
  }
  // The deliveries to the URL itself: when none of their answers came from a receiver (nothing listens, a 404, an
  // app's HTML page), the trailing-slash and the no-3xx rows have nothing to judge either, and fail for that cause.
  const fromReceiver = (r: CheckResult): boolean =>
    r.status !== undefined &&
    !(NOT_THE_RECEIVER.has(r.status) && errorCode(r.body ?? '') === undefined) &&
    !isHtmlPage(r.status, r.body ?? '');
  const direct = results.slice(0, -1);
  const unjudged = direct.some(fromReceiver) ? undefined : direct[0];
  const slashed = results.at(-1)!;
  if (unjudged !== undefined && slashed.ok && !fromReceiver(slashed))
    results[results.length - 1] = notJudged(slashed, unjudged, 'not judged', checks.at(-1)!);
  const last = noRedirect(redirects, checks.length, unjudged);
  onProgress?.(checks.length, checks.length + 1, last.name, last);
  return [...results, last];
}

// Answers of what stands where the receiver is not (no route, no POST) or in front of it (a login, a gateway whose app
// is down), unless they carry the receiver's own `{"error": code}`: the receiver answers none of these.
const NOT_THE_RECEIVER: ReadonlySet<number> = new Set([401, 403, 404, 405, 502, 504]);

// A row that could not be judged for the cause `of` failed with: it fails for that cause, told once with it.
function notJudged(
  row: CheckResult,
  of: CheckResult,
  words: string,
  { label, rule }: Pick<Check, 'label' | 'rule'>,
): CheckResult {
  return {
    ...row,
    ok: false,
    reason: `${words}: ${of.reason ?? 'no answer from a receiver'}`,
    label,
    rule,
    ...(of.cause !== undefined ? { cause: of.cause } : {}),
    ...(of.hint !== undefined ? { hint: of.hint } : {}),
  };
}

// "No 3xx anywhere" holds only when a receiver answered: where none did, no answer says anything of its redirects.
function noRedirect(
  redirects: readonly Redirect[],
  total: number,
  unjudged: CheckResult | undefined,
): CheckResult {
  const name = 'no 3xx anywhere';
  if (redirects.length > 0)
    return {
      name,
      ok: false,
      answer: `${redirects.length} redirect(s)`,
      reason: `${redirectSummary(redirects, total)}: redirects are not followed, a 3xx is a failed delivery (spec rule 5)`,
    };
  if (unjudged === undefined) return { name, ok: true, answer: 'none' };
  const rule = { label: 'no 3xx', rule: 'expected answers, none a 3xx (spec rule 5)' };
  return notJudged({ name, ok: false, answer: 'not known' }, unjudged, 'not known', rule);
}

// One redirect seen: which check met it, and where it pointed.
type Redirect = { readonly label: string; readonly target: string };

// Each target once, with the checks sent there (`every delivery` when all were): a login page in front of the
// endpoint redirects them all alike, and its URL need not be read six times.
function redirectSummary(redirects: readonly Redirect[], checks: number): string {
  const byTarget = new Map<string, Redirect[]>();
  for (const r of redirects) byTarget.set(r.target, [...(byTarget.get(r.target) ?? []), r]);
  return [...byTarget]
    .map(([target, group]) =>
      group.length === checks
        ? `every delivery: ${target}`
        : `${group.map((r) => r.label).join(', ')}: ${target}`,
    )
    .join('; ');
}

function judge(
  check: Check,
  url: string,
  answer: PostResult,
  redirects: Redirect[],
  secret: string,
): CheckResult {
  const failed = { label: check.label, rule: check.rule };
  if ('error' in answer) {
    const reason = answer.error.startsWith('no answer')
      ? `${answer.error}: a slower answer is a failed delivery, sent again (spec rule 2)`
      : answer.error;
    // Without the URL, which differs by its trailing slash from one check to the other.
    return {
      name: check.name,
      ok: false,
      answer: 'no answer',
      reason,
      ...failed,
      cause: answer.why ?? reason,
    };
  }
  const seen = `${answer.status} in ${answer.ms} ms`;
  if (answer.status >= 300 && answer.status < 400) {
    const sent = answer.location;
    const location = sent ? shownLocation(sent, url) : undefined;
    const target = `${answer.status}${location ? ` to ${location}` : ''}`;
    // A redirect's body often repeats its Location (`Redirecting to ...`): shown as the Location is. Redacted on
    // more than is shown, so a URL cut at 500 characters loses its credentials all the same.
    const body = sent && location ? answer.body.replaceAll(sent, location) : answer.body;
    redirects.push({ label: check.label, target });
    return {
      name: check.name,
      ok: false,
      answer: seen,
      status: answer.status,
      body: redactUrl(body.slice(0, 1000)).slice(0, 500),
      shownBody: shownBody(answer.body, answer.truncated),
      reason: `redirected (${target}); answer at the URL itself (spec rule 5)`,
      ...failed,
      cause: `${target} ${shownBody(answer.body, answer.truncated)}`,
      hint: 'mount the receiver at the exact URL the service sends to, with no redirect in front (trailing slash, http to https, a login page)',
    };
  }
  const page = isHtmlPage(answer.status, answer.body);
  const reason = page
    ? `answered ${answer.status} with an HTML page, not a receiver's answer`
    : check.judge(answer.status);
  const hint = page
    ? PAGE_HINT
    : reason === undefined
      ? undefined
      : hintFor(answer.status, answer.body, '--url', { url, secret });
  const shown = shownBody(answer.body, answer.truncated);
  return {
    name: check.name,
    ok: reason === undefined,
    answer: seen,
    status: answer.status,
    body: answer.body.slice(0, 500),
    shownBody: shown,
    // A refusal is the endpoint's, whichever check met it; a 2xx fails only the check that expected a refusal.
    ...(reason !== undefined ? { reason, ...failed } : {}),
    ...(reason !== undefined && (page || !is2xx(answer.status))
      ? { cause: `${answer.status} ${shown}` }
      : {}),
    ...(hint !== undefined ? { hint } : {}),
  };
}
