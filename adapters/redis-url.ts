// A Redis URL or option that can never reach the Redis meant (another scheme, node-redis's `url`), said with the fix.
// Internal: not a subpath of the package.

// ioredis reads a URL whose scheme is not redis: or rediss: (http://host:6379, tcp://host:6379) as a Unix socket
// path, `//host:6379`, and then fails every connection with a bare "connect ENOENT //host:6379". A socket path given
// as unix:///path keeps its third slash, and a real path has one, so only two slashes and a host are taken for this.
const URL_AS_PATH = /^\/\/(?=[^/])/;
const OTHER_SCHEME = /^(?!rediss?:)([a-z][a-z\d+.-]*):\/\/(?=[^/])/i;

/**
 * Why `connection` (an ioredis client, its options or a URL) can never reach Redis because its URL's scheme is not
 * `redis://` or `rediss://` (ioredis took the URL as a Unix socket path), with the URL to write; else undefined.
 * @example
 * const problem = notRedisUrl('http://127.0.0.1:6379'); // 'a Redis URL starts with redis:// ...'
 */
export const notRedisUrl = (connection: unknown): string | undefined => {
  let rest: string;
  if (typeof connection === 'string') {
    const scheme = OTHER_SCHEME.exec(connection);
    if (scheme === null) return undefined;
    rest = connection.slice(scheme[0].length);
  } else {
    const options =
      typeof (connection as { duplicate?: unknown } | null)?.duplicate === 'function'
        ? (connection as { options?: unknown }).options
        : connection;
    const path = (options as { path?: unknown } | null | undefined)?.path;
    if (typeof path !== 'string' || !URL_AS_PATH.test(path)) return undefined;
    rest = path.slice(2);
  }
  // A user name and password before the host are never shown.
  const shown = rest.replace(/^[^/?#@]*@/, '***@');
  return (
    `a Redis URL starts with redis:// (or rediss:// for TLS), so ioredis took this one as the Unix socket path ` +
    `//${shown} and could never connect: write redis://${shown} (or rediss://${shown})`
  );
};

/**
 * Why `connection` (an ioredis client or its options) would reach another Redis than its `url` option names (ioredis
 * has no such option, as node-redis has: it connects to its host and port, localhost:6379 by default), with the fix;
 * else undefined.
 * @example
 * const problem = ignoredUrlOption({ url: 'redis://cache:6379' }); // 'ioredis has no url option ...'
 */
export const ignoredUrlOption = (connection: unknown): string | undefined => {
  if (connection === null || typeof connection !== 'object') return undefined;
  const options = (
    typeof (connection as { duplicate?: unknown }).duplicate === 'function'
      ? (connection as { options?: unknown }).options
      : connection
  ) as { url?: unknown; host?: unknown; port?: unknown; path?: unknown } | undefined;
  const url = options?.url;
  if (typeof url !== 'string' || !URL.canParse(url)) return undefined;
  const named = new URL(url);
  const host = typeof options?.host === 'string' ? options.host : 'localhost';
  const port = Number(options?.port ?? 6379);
  const wanted = named.hostname.replace(/^\[|\]$/g, '');
  if (typeof options?.path !== 'string' && wanted === host && Number(named.port || 6379) === port)
    return undefined;
  const shown = url.replace(/\/\/[^/?#@]*@/, '//***@');
  return (
    `the Redis options have url: ${shown}, which ioredis ignores (it has no url option): it would connect to ` +
    `${typeof options?.path === 'string' ? options.path : `${host}:${port}`} instead. Give the URL itself: ` +
    'new Redis(url, options), or the queue its connection as the URL string'
  );
};
