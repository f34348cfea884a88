// Signature refusals that point at a mistake of configuration (a wrong secret, a wrong clock, a dropped header), said once, then at most once a minute.
import { type HeadersInput, signatureLookalike } from './headers.js';
import { type Logger, REPEAT_INTERVAL_MS } from './logger.js';

// The key a stale request whose signature did not match is counted under: not the clock's kind of refusal.
const UNSIGNED_STALE = 'timestamp_out_of_tolerance/unsigned';

// A missing or malformed header is reported only for a request that is the service's own (its other headers or its
// envelope): scanners send bare POSTs, and the service's deliveries arrive without it only when something drops it.
const HINTS: Readonly<Partial<Record<string, string>>> = {
  signature_mismatch:
    "Is this the endpoint's current `whsec_` secret? Rotating? Pass both: `secret: [current, next]`.",
  timestamp_out_of_tolerance:
    "Is this server's clock right? A signature more than `toleranceSeconds` (default 300) away from it is refused.",
  missing_signature:
    "The request carries the service's other headers or its event body but no Svc-Signature header: it is not reaching the app. Fix: make the proxy, CDN, load balancer or framework in front of this route forward the `Svc-Signature` header unchanged (not dropped, not renamed); in a test, send every header of `createSignedDelivery()` (workforce-webhooks/testing).",
  // A stale request whose signature does not match either (a replay of garbage, a scanner) proves nothing of the
  // clock: what it can mean before any delivery verified is the secret.
  [UNSIGNED_STALE]:
    "Its signature does not match this secret either, so it says nothing of this server's clock (a forged or replayed request does this too). Is this the endpoint's current `whsec_` secret? Rotating? Pass both: `secret: [current, next]`.",
  malformed_signature:
    "The request carries the service's other headers or its event body, but its Svc-Signature is not one `t=<unix seconds>,v1=<hex>` value: something in front of this route rewrites or repeats it, or the sender writes it another way (a `t` in milliseconds). Fix: forward the `Svc-Signature` header unchanged; a test signs with `signPayload()` (workforce-webhooks/testing).",
};

// The same codes when they come between verified deliveries: the secret and the clock are right for the others.
const SPREAD_HINTS: Readonly<Partial<Record<string, string>>> = {
  signature_mismatch:
    "Other deliveries verify: is a second endpoint, with a secret of its own, sending to this URL (pass both secrets), or does something in front of this route change some bodies? A forged probe (the CLI's check sends one) is refused so too.",
  timestamp_out_of_tolerance:
    "Other deliveries are on time: does something in front of this route hold some requests back? A stale probe (the CLI's check sends one) is refused so too.",
  [UNSIGNED_STALE]:
    "Other deliveries verify: a stale request whose signature does not match either is a replay or a forgery, not a sign of this server's clock or secret.",
  missing_signature:
    'Other deliveries carry it: does one route, instance or rule of the proxy, CDN or load balancer in front of this app drop the `Svc-Signature` header? Forward it unchanged on every path.',
  malformed_signature:
    'Other deliveries verify: does one route, instance or rule of the proxy, CDN or load balancer in front of this app rewrite or repeat the `Svc-Signature` header? Forward it unchanged on every path.',
};

// Refusals spread among verified deliveries are no run, yet they keep coming back with the sender's retries (1, 5,
// 30 minutes...) when they are a mistake: a second endpoint with another secret, a proxy that re-encodes some bodies.
// Three of one code within this long are said too; a lone forgery or the CLI's check stays quiet.
const SPREAD_MS = 10 * 60_000;
const SPREAD_COUNT = 3;

/**
 * What the receiver tells the report: each refused delivery's code and each verified one. For a stale or early
 * signature, `ageSeconds` is how many seconds before this server's clock it was signed (negative when after), given
 * only when the signature matched: a stale forgery says nothing of the clock. For a missing signature, the request's
 * headers, read only when a warning is said, to name a header the signature arrived under instead.
 */
export interface RefusalReport {
  refused(code: string, ageSeconds?: number, headers?: HeadersInput): void;
  verified(): void;
}

/** Options of `createRefusalReport`. */
export interface RefusalReportOptions {
  readonly logger: Logger;
  readonly now: () => number;
  readonly intervalMs?: number;
}

/**
 * Warns about a run of refusals with the same code, or three within ten minutes, with a count and a hint. A lone
 * refusal among verified deliveries (a forgery, a probe, the CLI's own `check`) is normal traffic; before the first
 * verified delivery, the first refusal is already worth saying: that is how a wrong secret looks.
 * @example
 * const report = createRefusalReport({ logger, now: Date.now }); report.refused('signature_mismatch');
 */
export function createRefusalReport({
  logger,
  now,
  intervalMs = REPEAT_INTERVAL_MS,
}: RefusalReportOptions): RefusalReport {
  let verifiedAny = false;
  // Refusals in a row with one code: a forgery then a stale delivery (the CLI's check) is two lone refusals.
  let run = 0;
  let runCode: string | undefined;
  const codes = new Map<
    string,
    { count: number; last: number; warned: boolean; spreadFrom: number; spread: number }
  >();
  return {
    verified() {
      verifiedAny = true;
      run = 0;
      runCode = undefined;
    },
    refused(code, ageSeconds, headers) {
      const key = code === 'timestamp_out_of_tolerance' && ageSeconds === undefined ? UNSIGNED_STALE : code;
      const hint = HINTS[key];
      if (hint === undefined) return;
      run = key === runCode ? run + 1 : 1;
      runCode = key;
      let seen = codes.get(key);
      if (seen === undefined) {
        seen = { count: 0, last: Number.NEGATIVE_INFINITY, warned: false, spreadFrom: 0, spread: 0 };
        codes.set(key, seen);
      }
      seen.count += 1;
      const at = now();
      if (seen.spread === 0 || at - seen.spreadFrom > SPREAD_MS) {
        seen.spreadFrom = at;
        seen.spread = 0;
      }
      seen.spread += 1;
      const spreadOnly = verifiedAny && run < 2;
      if (spreadOnly && seen.spread < SPREAD_COUNT) return;
      if (at - seen.last < intervalMs) return;
      const { count } = seen;
      const warned = seen.warned;
      seen.last = at;
      seen.count = 0;
      seen.warned = true;
      // A clock off by minutes is every delivery's age: the number, and the fix, say it is the clock.
      const clock = !spreadOnly && ageSeconds !== undefined ? clockFix(ageSeconds) : '';
      // A header under another name is named: the fix is that name's, wherever the request came by.
      const renamed =
        code === 'missing_signature' && headers !== undefined ? signatureLookalike(headers) : undefined;
      const said = renamed !== undefined ? renamedFix(renamed) : spreadOnly ? SPREAD_HINTS[key] : hint;
      logger.warn(
        ageSeconds === undefined ? { code, count } : { code, count, ageSeconds },
        `workforce-webhooks: ${count === 1 ? 'a delivery was' : `${count} deliveries were`} refused 400 ${code}${warned ? ' since the last warning' : ''}. ${said}${clock}`,
      );
    },
  };
}

// Ten years: no clock drifts so far; a `now` option in seconds (or a clock stuck at 0) is that far from `t`.
const NOT_A_CLOCK_SECONDS = 10 * 365 * 24 * 3600;

// The offset tells a clock (the same minutes on every delivery) from a replay; the fix is the clock's own.
function clockFix(ageSeconds: number): string {
  // NaN: a `now` that returned no number (a string, `undefined`), which no clock sync fixes.
  if (!Number.isFinite(ageSeconds))
    return ' The server time is not a number: does the `now` option return milliseconds, like `Date.now`?';
  const when = ageSeconds >= 0 ? 'before' : 'after';
  const off = ` The last one was signed ${Math.abs(ageSeconds)} s ${when} this server's time.`;
  if (Math.abs(ageSeconds) > NOT_A_CLOCK_SECONDS)
    return `${off} That is years, not a drifting clock: does the \`now\` option return milliseconds, like \`Date.now\`?`;
  return `${off} Fix: sync this server's clock (NTP: chrony, \`timedatectl set-ntp true\`); a test signs with the current time.`;
}

// The fix for a signature seen under another name: a hyphen turned underscore is a client's or gateway's doing (and
// nginx drops such names by default), any other name a proxy's rule.
function renamedFix(name: string): string {
  const seen = `The request carries the service's other headers or its event body, and a signature under the header \`${name}\`, not \`Svc-Signature\`:`;
  if (name.includes('_'))
    return `${seen} a hyphen became an underscore on the way (a gateway or a client that writes header names so). Fix: send and forward it as \`Svc-Signature\`, with a hyphen (nginx drops names with underscores unless \`underscores_in_headers on;\`).`;
  return `${seen} something in front of this route renames it. Fix: make the proxy, CDN, load balancer or framework forward it under its own name, \`Svc-Signature\`, unchanged.`;
}
