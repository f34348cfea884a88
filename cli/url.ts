// An endpoint's URL as the CLI takes it: http(s), without credentials, never shown with a password.
import { refusedPort } from '../api/bad-port.js';
import { hasCredentials, redactUrl } from '../testing/mock-service/url.js';
import { UsageError } from './io.js';

export { redactUrl };

/**
 * The value of a URL option (`--url`, `--deliver-to`) checked as the service's endpoint URL, or a `UsageError` that
 * shows it without its credentials.
 * @example
 * const url = endpointUrl(values.url, '--url');
 */
export function endpointUrl(value: string, name: string): string {
  if (!URL.canParse(value)) throw new UsageError(`${name} is not a URL: ${redactUrl(value)}`);
  const url = new URL(value);
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`${name} must be an http(s) URL, got ${JSON.stringify(redactUrl(value))}`);
  // fetch refuses such a URL; the service sends no credentials but the signature, so the endpoint needs none.
  if (hasCredentials(url))
    throw new UsageError(
      `${name} must not carry a user name or password (the service sends none): ${redactUrl(value)}`,
    );
  return value;
}

/**
 * Refuses a URL option on a port fetch never connects to, with the fix; called once the other options are checked,
 * as every delivery would otherwise fail at once with fetch's bare "bad port".
 * @example
 * fetchablePort(url, '--url');
 */
export function fetchablePort(value: string, name: string): void {
  const refused = refusedPort(new URL(value));
  if (refused !== undefined) throw new UsageError(`${name}: ${refused}; run the endpoint on another port`);
}
