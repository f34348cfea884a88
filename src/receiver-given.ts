// The check each adapter factory makes of what it was given: mounted itself instead of its result, a factory is
// handed a request (or the framework's app) and would never answer it.
import { ConfigurationError } from './errors.js';

/**
 * The error that says `factory` was given something other than a receiver (no `method`), with the line to write;
 * undefined for a receiver.
 * @example
 * const wrong = notAReceiver(receiver, 'handle', 'createNodeHandler', 'the request handler', 'createNodeHandler(receiver)');
 * if (wrong !== undefined) throw wrong;
 */
export function notAReceiver(
  given: unknown,
  method: 'handle' | 'fetch',
  factory: string,
  returns: string,
  line: string,
): ConfigurationError | undefined {
  if (typeof (given as Record<string, unknown> | null | undefined)?.[method] === 'function') return undefined;
  return new ConfigurationError(
    `workforce-webhooks: ${factory} takes the receiver createReceiver made, and returns ${returns}: ${line}`,
  );
}
