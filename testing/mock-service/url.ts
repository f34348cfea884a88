// Credentials in an endpoint's URL: found, and hidden wherever a URL is shown.

// `scheme://user:password@`: from `//` to the last `@` before the path, in any text (a password may hold an `@`).
const CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/)[^/?#\s]*@/gi;

/**
 * `text` with the user name and password of every URL in it replaced by `***`, so a message can show the URL.
 * @example
 * redactUrl('could not reach https://user:pw@example.com/hook') // 'could not reach https://***@example.com/hook'
 */
export function redactUrl(text: string): string {
  return text.replace(CREDENTIALS, '$1***@');
}

/**
 * True when the URL carries a user name or a password, which `fetch` refuses to send and a delivery never needs.
 * @example
 * hasCredentials(new URL('https://user:pw@example.com/hook')) // true
 */
export function hasCredentials(url: URL): boolean {
  return url.username !== '' || url.password !== '';
}
