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
  // Quotes kept from a .env file or a doubly quoted shell line: the URL inside is fine, the quotes are the mistake.
  const quoted = /^\s*(["'])\s*(https?:\/\/.*?)\s*\1\s*$/is.exec(value)?.[2];
  if (quoted !== undefined && URL.canParse(quoted))
    throw new UsageError(
      `${name} is wrapped in quotes (kept from a .env file?): remove them, as in ${shownValue(quoted)}`,
    );
  const guess = withScheme(value, 'http');
  if (guess !== undefined)
    throw new UsageError(
      `${name} has no scheme: write ${guess.url}, or https://... if the endpoint is served with TLS${guess.credentials ? ' (and no user name or password: the service sends none)' : ''}`,
    );
  if (!URL.canParse(value)) throw new UsageError(`${name} is not a URL: ${shownValue(value)}`);
  const url = new URL(value);
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`${name} must be an http(s) URL, got ${JSON.stringify(shownValue(value))}`);
  // fetch refuses such a URL; the service sends no credentials but the signature, so the endpoint needs none.
  if (hasCredentials(url))
    throw new UsageError(
      `${name} must not carry a user name or password (the service sends none): ${shownValue(value)}`,
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

/**
 * A URL option's value as an error may show it: a user name and password before the host are `***`, with a scheme or
 * without one (`user:pw@host/db` parses as the scheme `user:`, which redactUrl does not take for a URL's).
 * @example
 * shownValue('user:pw@localhost:5432/app') // '***@localhost:5432/app'
 */
export function shownValue(value: string): string {
  return redactUrl(value).replace(/^(\/\/)?[^/?#\s]*@/, '$1***@');
}

// A host (a name with a dot, localhost, an IPv4 or a bracketed IPv6 address, or any name with a port) at the start of
// a value without `://`: `localhost:3000/webhooks` parses as the scheme `localhost:`, `127.0.0.1:3000/x` not at all.
const HOST_FIRST =
  /^(?:\/\/)?(?:[^/?#\s@]*@)?(?:\[[\da-f:.]+\]|localhost|[a-z\d-]+(?:\.[a-z\d-]+)+|[a-z\d-]+(?=:\d))(?::\d{1,5})?(?:[/?#]|$)/i;

/**
 * The value with `<scheme>://` in front, and without a user name or password, when it is a URL but for its scheme
 * (`localhost:3000/webhooks`, `user:pw@db.internal/app`); `credentials` says whether some were left out.
 * @example
 * withScheme('localhost:3000/webhooks', 'http') // { url: 'http://localhost:3000/webhooks', credentials: false }
 */
export function withScheme(
  value: string,
  scheme: string,
): { readonly url: string; readonly credentials: boolean } | undefined {
  if (value.includes('://') || !HOST_FIRST.test(value)) return undefined;
  const rest = value.replace(/^\/\//, '');
  const guess = `${scheme}://${rest.replace(/^[^/?#\s@]*@/, '')}`;
  return URL.canParse(guess) ? { url: guess, credentials: /^[^/?#\s@]*@/.test(rest) } : undefined;
}
