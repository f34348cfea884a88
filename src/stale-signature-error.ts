// The refusal of a signature out of its time tolerance, saying whether it matched.
import { WebhookVerificationError } from './errors.js';

/**
 * The `timestamp_out_of_tolerance` refusal, with whether the signature matched: a stale request signed with the
 * secret points at a clock (or a delay on the way), a stale forgery at nothing but the sender.
 * @example
 * if (error instanceof StaleSignatureError && error.signed) console.log(`signed ${error.ageSeconds} s ago`);
 */
export class StaleSignatureError extends WebhookVerificationError {
  /** Seconds from `t` to now: positive when `t` is in the past, `NaN` when the clock gave no number. */
  readonly ageSeconds: number;
  /** Whether a `v1` matches under a secret: only the time is wrong. The answer does not depend on it. */
  readonly signed: boolean;

  constructor(ageSeconds: number, toleranceSeconds: number, signed: boolean) {
    super(
      'timestamp_out_of_tolerance',
      Number.isFinite(ageSeconds)
        ? `the signature timestamp is ${Math.abs(ageSeconds)} s ${ageSeconds > 0 ? 'old' : 'in the future'} (tolerance ${toleranceSeconds} s)`
        : 'the clock (`now`) gave no number of milliseconds, so no signature time can be judged',
    );
    this.name = 'StaleSignatureError';
    this.ageSeconds = ageSeconds;
    this.signed = signed;
  }
}
