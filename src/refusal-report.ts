// Signature refusals that point at a mistake of configuration (a wrong secret, a wrong clock), said once, then at most once a minute.
import { type Logger, REPEAT_INTERVAL_MS } from './logger.js';

const HINTS: Readonly<Partial<Record<string, string>>> = {
  signature_mismatch:
    "Is this the endpoint's current `whsec_` secret? Rotating? Pass both: `secret: [current, next]`.",
  timestamp_out_of_tolerance:
    "Is this server's clock right? A signature more than `toleranceSeconds` (default 300) away from it is refused.",
};

/** What the receiver tells the report: each refused delivery's code, and each verified one. */
export interface RefusalReport {
  refused(code: string): void;
  verified(): void;
}

/** Options of `createRefusalReport`. */
export interface RefusalReportOptions {
  readonly logger: Logger;
  readonly now: () => number;
  readonly intervalMs?: number;
}

/**
 * Warns about a run of refusals with the same code, with a count and a hint. A lone refusal among verified
 * deliveries (a forgery, a probe, the CLI's own `check`) is normal traffic; before the first verified delivery,
 * the first refusal is already worth saying: that is how a wrong secret looks.
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
  const codes = new Map<string, { count: number; last: number; warned: boolean }>();
  return {
    verified() {
      verifiedAny = true;
      run = 0;
      runCode = undefined;
    },
    refused(code) {
      const hint = HINTS[code];
      if (hint === undefined) return;
      run = code === runCode ? run + 1 : 1;
      runCode = code;
      let seen = codes.get(code);
      if (seen === undefined) {
        seen = { count: 0, last: Number.NEGATIVE_INFINITY, warned: false };
        codes.set(code, seen);
      }
      seen.count += 1;
      if (verifiedAny && run < 2) return;
      const at = now();
      if (at - seen.last < intervalMs) return;
      const { count } = seen;
      const warned = seen.warned;
      seen.last = at;
      seen.count = 0;
      seen.warned = true;
      logger.warn(
        { code, count },
        `workforce-webhooks: ${count === 1 ? 'a delivery was' : `${count} deliveries were`} refused 400 ${code}${warned ? ' since the last warning' : ''}. ${hint}`,
      );
    },
  };
}
