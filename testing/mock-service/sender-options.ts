// The sender's options, checked as the mock is made: none that fails every delivery or passes what the service fails.

// A timer's longest wait: Node fires a longer one after 1 ms, with a warning.
const LONGEST_TIMER_MS = 2 ** 31 - 1;

/**
 * Throws, with the fix, on a `timeoutMs` outside 1 to 10 000 (spec "Limits": the service waits 10 s), a retry wait
 * no timer can make, or a `version` no `User-Agent` header can carry; else each attempt would fail on an error blamed
 * on the endpoint, or a retry come at once.
 * @example
 * checkSenderOptions(10_000, DEFAULT_RETRY_SCHEDULE_MS);
 */
export function checkSenderOptions(
  timeoutMs: number,
  retryScheduleMs: readonly number[],
  version = '1.0',
): void {
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 10_000)
    throw new RangeError(
      `workforce-webhooks mock: timeoutMs must be a whole number of ms from 1 to 10000 (the service waits at most 10 s for an answer, then retries: a longer wait would pass an endpoint it fails), got ${String(timeoutMs)}`,
    );
  const bad = Array.isArray(retryScheduleMs)
    ? retryScheduleMs.find((ms) => typeof ms !== 'number' || !(ms >= 0 && ms <= LONGEST_TIMER_MS))
    : retryScheduleMs;
  if (bad !== undefined)
    throw new RangeError(
      `workforce-webhooks mock: retryScheduleMs must be a list of waits in ms from 0 to ${LONGEST_TIMER_MS}, got ${String(bad)}`,
    );
  // Sent as `User-Agent: Svc-Webhooks/<version>`: a newline or a letter outside ASCII fails every attempt in fetch.
  if (typeof version !== 'string' || !/^[\x21-\x7e]+$/.test(version))
    throw new TypeError(
      `workforce-webhooks mock: version must be printable ASCII without spaces (it is sent as User-Agent: Svc-Webhooks/<version>), got ${JSON.stringify(version)}`,
    );
}
