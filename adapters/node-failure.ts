// Why a Node request's body could not be had, and the core's `bodyProblem` for it: the app's own mistakes (a
// stream read or decoded before the route) are said with their fix. No Node module is imported (edge bundles).
import type { BodyProblem } from '../src/receiver.js';

/**
 * Why a body could not be had: over the limit, cut short or broken, not complete in time, or the app's doing:
 * something `read` the stream before the route, or `decoded` it (set its encoding, so it gives text).
 */
export type BodyFailure = 'too_large' | 'unreadable' | 'timeout' | 'read' | 'decoded';

// What happened, said before the adapter's fix: the host's mistake, not the sender's.
const HAPPENED = {
  read: 'the request stream was read before the webhook route, so the bytes that were signed are gone',
  decoded:
    "the request stream's encoding was set (req.setEncoding) before the webhook route, so it gives decoded text, not the bytes that were signed",
} as const;

/**
 * The core's `bodyProblem` for a failure: the app's own mistakes are `raw_body_unavailable` with what happened
 * and `fix` (logged once), the rest the sender's (413, 408, 400).
 * @example
 * receiver.handle({ method, headers, bodyProblem: bodyProblemOf('read', 'mount the route before the parser') });
 */
export function bodyProblemOf(failure: BodyFailure, fix: string): BodyProblem {
  return failure === 'read' || failure === 'decoded'
    ? { kind: 'raw_body_unavailable', fix: `${HAPPENED[failure]}. ${fix}` }
    : { kind: failure };
}
