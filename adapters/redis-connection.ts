// A Redis client's connection as the user set it up: failures said once each with the fix (a wrong password, host or
// port, TLS on one side).
import type { Cluster, Redis } from 'ioredis';
import type { Logger } from '../src/logger.js';

/** A connection failure as ioredis reports it: a Cluster's names the last node's in `lastNodeError`. */
export type ConnectionError = Error & { readonly code?: unknown; readonly lastNodeError?: ConnectionError };

/**
 * Whether `error` is a failure of the connection itself, as ioredis reports one on each reconnect: a socket's (a
 * system error code such as ECONNREFUSED), a TLS handshake's, or a refused login; not a script's or a command's.
 * @example
 * if (isConnectionFailure(error)) say(connectionFailure(error, tls, reached).text);
 */
export const isConnectionFailure = (error: ConnectionError): boolean => {
  const cause = error.lastNodeError ?? error;
  const code = typeof cause.code === 'string' ? cause.code : '';
  return (
    /^E[A-Z]+$|CERT|SELF_SIGNED|^ERR_SSL|^ERR_TLS/.test(code) || /^(WRONGPASS|NOAUTH)/.test(cause.message)
  );
};

// The commands that log in: their arguments hold the password.
const LOGIN = /^(auth|hello)$/i;

// A refused login's error names the command that failed with its arguments, the password among them, and a logger
// prints an error's own fields (and its cause's).
/**
 * `error` fit for a log: a refused login's (or a Cluster's whose `lastNodeError` is one) copied with its command's
 * name only, any other value as it is.
 * @example
 * logger.error({ err: withoutPassword(error) }, 'the store could not claim the event');
 */
export const withoutPassword = <T>(error: T): T => {
  if (!(error instanceof Error)) return error;
  const { command, lastNodeError } = error as { command?: { name?: unknown }; lastNodeError?: unknown };
  const login = typeof command?.name === 'string' && LOGIN.test(command.name);
  const node = withoutPassword(lastNodeError);
  if (!login && node === lastNodeError) return error;
  const copy = Object.create(Object.getPrototypeOf(error), Object.getOwnPropertyDescriptors(error)) as Error;
  const field = (value: unknown) => ({ value, enumerable: true, writable: true, configurable: true });
  if (login) Object.defineProperty(copy, 'command', field({ name: command?.name, args: [] }));
  if (node !== lastNodeError) Object.defineProperty(copy, 'lastNodeError', field(node));
  return copy as T;
};

/**
 * Why a client cannot connect, said with the fix, by kind: a wrong password, host or port, TLS on one side only. Once
 * Redis was `reached`, a refused connection or a timeout is an outage the client rides out, said as such.
 * @example
 * client.on('error', (error) => logger.error({}, connectionFailure(error, false, reached).text));
 */
export const connectionFailure = (
  error: ConnectionError,
  tls: boolean,
  reached: boolean,
): { readonly kind: string; readonly text: string } => {
  const cause = error.lastNodeError ?? error;
  const { message } = cause;
  const code = typeof cause.code === 'string' ? cause.code : '';
  if (message.startsWith('WRONGPASS'))
    return {
      kind: 'WRONGPASS',
      text: `Redis refused the username or password (${message}): check the password (and username) in the Redis URL, redis://user:password@host:port, or the client's password and username options`,
    };
  if (message.startsWith('NOAUTH'))
    return {
      kind: 'NOAUTH',
      text: "Redis requires a password and the client gave none (NOAUTH): put it in the Redis URL, redis://:password@host:port, or the client's password option",
    };
  if (/CERT|SELF_SIGNED|^ERR_SSL|^ERR_TLS|^EPROTO$/.test(code))
    return {
      kind: 'tls',
      text: `the TLS connection to Redis failed (${message}): give the client the server's CA (tls: { ca }), or use a redis:// URL and no tls option if the server does not speak TLS`,
    };
  if (!reached && code === 'ECONNREFUSED')
    return {
      kind: code,
      text: `nothing accepts connections at the Redis address (${message}): check the host and port of the Redis URL, and that Redis runs there`,
    };
  if (!reached && (code === 'ENOTFOUND' || code === 'EAI_AGAIN'))
    return {
      kind: code,
      text: `the Redis host name does not resolve (${message}): check the host of the Redis URL`,
    };
  // A plain client's first command read by a TLS-only server as a broken handshake: the server hangs up.
  if (!reached && !tls && (code === 'ECONNRESET' || code === 'EPIPE'))
    return {
      kind: code,
      text: `Redis closed the connection before it was ready (${message}): if the server takes TLS connections only, use a rediss:// URL (or the client's tls option)`,
    };
  // A TLS client's handshake read by a plain server as a command that never ends: neither side says a word.
  if (!reached && code === 'ETIMEDOUT')
    return {
      kind: code,
      text: tls
        ? `Redis did not finish the TLS handshake within the client's connectTimeout (${message}): if the server does not speak TLS, use a redis:// URL and no tls option; else check the host, port and firewall`
        : `Redis did not accept the connection within the client's connectTimeout (${message}): check the host and port of the Redis URL, and any firewall between`,
    };
  return {
    kind: 'unreachable',
    text: `Redis is unreachable (${message}); the client reconnects by itself, and deliveries are answered 503 until then`,
  };
};

/**
 * What a store has heard of its client's connection: the last failure till it was ready again, and whether Redis
 * ever answered it (a refused connection after that is an outage, not a wrong address).
 */
export interface Connection {
  failure: ConnectionError | undefined;
  reached: boolean;
  readonly tls: boolean;
}

// The connection each client's stores share: one listener per client, however many stores it serves.
const connections = new WeakMap<object, Connection>();

// The kinds of failure already said of each Redis, by address, across every client that reports through
// `firstToSay` (each store's client, each of the queue's connections): a wrong password is one line, not one per
// client trying it. A Cluster's are its client's own.
const saidOf = new Map<string, Set<string>>();
const saidOfCluster = new WeakMap<object, Set<string>>();
const kindsSaid = (client: Redis | Cluster): Set<string> => {
  const address = addressOf(client);
  const known = address === undefined ? saidOfCluster.get(client) : saidOf.get(address);
  if (known !== undefined) return known;
  const kinds = new Set<string>();
  if (address === undefined) saidOfCluster.set(client, kinds);
  else saidOf.set(address, kinds);
  return kinds;
};

/**
 * The address of `client`'s Redis, its socket path or `host:port`, by which what was said of it is kept once for
 * every client of the process; undefined for a Cluster, whose nodes vary (what is said of it is its client's own).
 * @example
 * const address = addressOf(client); // '127.0.0.1:6379'
 */
export const addressOf = (client: Redis | Cluster): string | undefined => {
  if (client.isCluster) return undefined;
  const { host, port, path } = (client.options ?? {}) as { host?: string; port?: number; path?: string };
  return path ?? `${host}:${port}`;
};

/**
 * Whether the `kind` of connection failure is yet to be said of the Redis that `client` connects to: true once per
 * kind and address, whichever client of the process asks, until one of them is ready again (`readyAgain`).
 * @example
 * if (firstToSay(client, kind)) logger.error({ kind }, `workforce-webhooks: ${text}`);
 */
export const firstToSay = (client: Redis | Cluster, kind: string): boolean => {
  const kinds = kindsSaid(client);
  if (kinds.has(kind)) return false;
  kinds.add(kind);
  return true;
};

/**
 * Forgets what was said of `client`'s Redis, once a client of it is ready: the next failure is news again.
 * @example
 * client.on('ready', () => readyAgain(client));
 */
export const readyAgain = (client: Redis | Cluster): void => {
  kindsSaid(client).clear();
};

/**
 * Says each kind of connection failure of `client` once, with its fix, until a client of its Redis is ready again
 * (another store's client, or a queue's connection, having said it counts): a listener
 * of the store's own, where ioredis prints an `error` nobody hears on every reconnect (every few seconds, no fix).
 * @example
 * const connection = watchConnection(client, logger); // connection.failure: the last one, till ready again
 */
export const watchConnection = (client: Redis | Cluster, logger: Logger): Connection => {
  const known = connections.get(client);
  if (known !== undefined) return known;
  const settings = (client.options ?? {}) as {
    readonly tls?: unknown;
    readonly redisOptions?: { tls?: unknown };
  };
  const connection: Connection = {
    failure: undefined,
    reached: client.status === 'ready',
    tls: Boolean(settings.tls ?? settings.redisOptions?.tls),
  };
  connections.set(client, connection);
  if (typeof client.on !== 'function') return connection;
  client.on('ready', () => {
    connection.failure = undefined;
    connection.reached = true;
    readyAgain(client);
  });
  client.on('error', (error: ConnectionError) => {
    if (!(error instanceof Error)) return;
    connection.failure = error;
    const { kind, text } = connectionFailure(error, connection.tls, connection.reached);
    if (firstToSay(client, kind)) logger.error({ kind }, `workforce-webhooks: ${text}`);
  });
  return connection;
};
