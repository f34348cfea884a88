// The options of a delivery `send` and `check` make, checked as the service's own deliveries would be.
import { isUuid } from '../src/hex.js';
import { typoWarning } from '../src/unknown-type.js';
import { integer, UsageError } from './io.js';

/**
 * Help line of `--timeout-ms`, the same in `send` and `check`.
 * @example
 * `Options:\n${TIMEOUT_HELP}`
 */
export const TIMEOUT_HELP: string =
  "  --timeout-ms   how long to wait for an answer, 1 to 10000 (default 10000: the service's limit)";

/**
 * `--timeout-ms`, 1 to 10 000 (default 10 000), or a `UsageError`.
 * @example
 * const timeoutMs = answerTimeout(values['timeout-ms']);
 */
export function answerTimeout(value: string | undefined): number {
  const timeoutMs = integer(value, '--timeout-ms', 10_000);
  // The service counts an answer slower than 10 s as failed: a longer limit would pass what it fails.
  if (timeoutMs < 1 || timeoutMs > 10_000)
    throw new UsageError(`--timeout-ms must be 1 to 10000 (the service's answer limit), got ${value}`);
  return timeoutMs;
}

/**
 * `--type` as the Svc-Event-Type header can carry it (printable ASCII, no space), or a `UsageError`.
 * @example
 * const type = eventType(values.type);
 */
export function eventType(value: string): string {
  if (!/^[\x21-\x7e]+$/.test(value))
    throw new UsageError(
      `--type must be printable ASCII without spaces (it is sent as the Svc-Event-Type header), got ${JSON.stringify(value)}`,
    );
  return value;
}

/**
 * `--id` as the spec's event id, a uuid, or a `UsageError`.
 * @example
 * const id = eventId(values.id);
 */
export function eventId(value: string): string {
  // Spec "Delivery format": id is a uuid; the receiver refuses any other shape as an invalid payload.
  if (!isUuid(value)) throw new UsageError(`--id must be a uuid (an event id), got ${JSON.stringify(value)}`);
  return value;
}

/**
 * The line to print when `--type` is a keystroke or two from a type the service sends (`leave.aproved`), else
 * undefined: it is sent as given (a type of your own is allowed), but no handler of the type meant runs on it.
 * @example
 * const note = typeTypo('leave.aproved'); // "--type leave.aproved is no event type the service sends: did you mean leave.approved? ..."
 */
export function typeTypo(type: string): string | undefined {
  const meant = /did you mean '([^']+)'/.exec(typoWarning(type) ?? '')?.[1];
  return meant === undefined
    ? undefined
    : `--type ${type} is no event type the service sends: did you mean ${meant}? sent as given, no handler of ${meant} runs on it`;
}
