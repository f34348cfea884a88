// What is wrong with a Postgres connection string that pg would misread, said with the fix and never with the string.
// pg takes a path (a socket directory), `socket:` or any `scheme://` URL; it reads anything else as a database on a
// host named "base", and a password with a reserved character as the end of the host: a connect then fails naming a
// host nobody typed, or as a bare "Invalid URL", once per delivery.
import { ConfigurationError } from '../src/errors.js';

/** What is wrong with a connection string (said after its name: "--postgres ...") and how to put it right. */
export type UrlProblem = readonly [what: string, how: string];

const NO_URL: UrlProblem = [
  'is no URL (pg reads it as a database on a host named "base")',
  'write it as postgres://user:password@host:port/database',
];
const INVALID: UrlProblem = [
  'is not a valid URL',
  'percent-encode any @ : / ? # % or space in the user and password (encodeURIComponent), and check the host and port',
];
const HOST_CUT: UrlProblem = [
  'has an @ after its host (a / ? or # in the password ends the host before it, so pg would connect to the wrong host)',
  'percent-encode the password (encodeURIComponent)',
];

/**
 * Why pg would misread `value` as a connection string, with the fix; undefined when pg reads it as written. The
 * string itself is never part of the answer: it may hold a password.
 * @example
 * const problem = connectionStringProblem(process.env.DATABASE_URL ?? '');
 * if (problem) throw new Error(`DATABASE_URL ${problem[0]}: ${problem[1]}`);
 */
export function connectionStringProblem(value: string): UrlProblem | undefined {
  // None (pg ignores an empty one, and reads the PG* variables), or a socket directory, as pg takes it.
  if (value === '' || value.startsWith('/')) return undefined;
  const socket = /^socket:/i.test(value);
  if (!socket && !/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return NO_URL;
  // As pg parses it: spaces and stray % encoded first, an empty host (`user@/db`) allowed.
  const text = / |%[^a-f0-9]|%[a-f0-9][^a-f0-9]/i.test(value)
    ? encodeURI(value).replace(/%25(\d\d)/g, '%$1')
    : value;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    try {
      url = new URL(text.replace('@/', '@___DUMMY___/'));
    } catch {
      return INVALID;
    }
  }
  // `user:1234/secret@host/db`: the host pg would use is `user`, its port the password's first digits.
  if (!socket && url.username === '' && `${url.pathname}${url.search}${url.hash}`.includes('@'))
    return HOST_CUT;
  return undefined;
}

/**
 * Throws a `ConfigurationError` with the fix when the `pg.Pool` (its options) has a connection string pg would
 * misread: checked when the store is made, since pg reads it at each connect and every call would fail alike.
 * @example
 * assertReadableConnectionString(new pg.Pool({ connectionString: process.env.DATABASE_URL }));
 */
export function assertReadableConnectionString(pool: object): void {
  const { connectionString } = (pool as { options?: { connectionString?: unknown } }).options ?? {};
  const problem =
    typeof connectionString === 'string' ? connectionStringProblem(connectionString) : undefined;
  if (problem !== undefined)
    throw new ConfigurationError(`the pg pool's connectionString ${problem[0]}: ${problem[1]}`);
}
