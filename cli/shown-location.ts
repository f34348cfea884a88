// A redirect's Location as a message may show it: without the user name and password it may carry.
import { hasCredentials, redactUrl } from '../testing/mock-service/url.js';

/**
 * A redirect's Location as the endpoint sent it, but with no user name or password in it (they go to the terminal
 * and CI logs): `***` instead, however the Location spells them (`//user:pw@host` has no scheme for redactUrl).
 * @example
 * shownLocation('//user:pw@example.com/hook', 'http://localhost:3000/hook') // 'http://***@example.com/hook'
 */
export function shownLocation(location: string, base: string): string {
  const resolved = URL.canParse(location, base) ? new URL(location, base) : undefined;
  if (resolved === undefined || !hasCredentials(resolved)) return redactUrl(location);
  resolved.username = '***';
  resolved.password = '';
  return resolved.href;
}
