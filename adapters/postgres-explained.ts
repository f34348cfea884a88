// What a Postgres store call's failure means when it is a setup mistake (a table never made, a refused login, a wrong
// address), said as a ConfigurationError with the fix.
import { ConfigurationError } from '../src/errors.js';

// SQLSTATE invalid_schema_name: `migrate()` of a `schema.table` whose schema is not there.
const INVALID_SCHEMA = '3F000';
// SQLSTATE undefined_table: a statement of the store named a table that is not there.
const UNDEFINED_TABLE = '42P01';
// SQLSTATE read_only_sql_transaction: a write on a server that takes none (a replica, default_transaction_read_only).
const READ_ONLY = '25006';
// The server's words for an unqualified CREATE TABLE on a session whose search_path lists no schema that exists, with
// the SQLSTATE of a missing schema.
const NO_SCHEMA_SELECTED = 'no schema has been selected to create in';

// What is wrong and how to put it right: said as `<what> (<the server's words>): <how>`.
type Fix = readonly [what: string, how: string];

// What the store's table, its schema or the server it is on lacks, by SQLSTATE (and the server's words), with the fix:
// wrong on every call until someone puts it right, so said as a setup error.
const SETUP_FIXES: readonly (readonly [(error: { code?: unknown; message: string }) => boolean, Fix])[] = [
  [
    ({ code }) => code === UNDEFINED_TABLE,
    [
      "the Postgres store's table is missing",
      "run `await store.migrate()` on start, or `npx workforce-webhooks migrate --postgres $DATABASE_URL` once; made already in a schema the connection's search_path does not list? name it in `table` (`public.workforce_webhook_events`)",
    ],
  ],
  [
    // An unqualified table on a session whose search_path lists no schema that exists (a role's or a pooler's
    // setting): no schema to create in, and none to find the table in either.
    ({ code, message }) => code === INVALID_SCHEMA && message === NO_SCHEMA_SELECTED,
    [
      "the connection's search_path names no schema that exists",
      "set it to the table's schema (ALTER ROLE <user> SET search_path = public), or name the schema in `table` (`public.workforce_webhook_events`), then migrate again",
    ],
  ],
  [
    ({ code }) => code === INVALID_SCHEMA,
    [
      "the schema of the Postgres store's table does not exist",
      'create it (CREATE SCHEMA <name>, as its owner) or give `table` a schema that exists, then migrate again',
    ],
  ],
  [
    // A replica's URL given as the store's, or default_transaction_read_only set for the role or database: every
    // claim is a write, so every delivery would be refused as though Postgres were down.
    ({ code }) => code === READ_ONLY,
    [
      'Postgres refuses writes here, a read-only server',
      'point the pool at the primary (after a failover, the new one), not a replica, and check that default_transaction_read_only is off for its role and database',
    ],
  ],
];

// Why the pool cannot log in to Postgres, by SQLSTATE or by pg's own words, with the fix: wrong however long the
// app waits, so said as a setup error. pg's messages name the user, database or host, never a password.
const LOGIN_FIXES: readonly (readonly [(error: { code?: unknown; message: string }) => boolean, Fix])[] = [
  [
    ({ code }) => code === '28P01',
    [
      'Postgres refused the password',
      'check the user and password of the connection string (postgres://user:password@host:port/database) or of the pool',
    ],
  ],
  [
    ({ message }) => message.includes('client password must be a string'),
    [
      'Postgres asks for a password and the pool gave none',
      "put it in the connection string (postgres://user:password@host:port/database) or the pool's password option",
    ],
  ],
  [
    ({ code }) => code === '3D000',
    [
      "the connection string's database does not exist",
      'check its name (postgres://user:password@host:port/database), or create it (CREATE DATABASE)',
    ],
  ],
  [
    ({ code, message }) => code === '28000' && message.includes('no encryption'),
    [
      'Postgres takes only SSL connections from this host',
      'give the pool ssl (sslmode=require in the connection string, or ssl: { ca } for a private CA)',
    ],
  ],
  [
    ({ code }) => code === '28000',
    [
      'Postgres turned the login away',
      'check the user of the connection string exists and may log in from this host (pg_hba.conf)',
    ],
  ],
  [
    ({ message }) => message === 'The server does not support SSL connections',
    [
      'the pool asks for SSL and this Postgres does not speak it',
      'drop sslmode or ssl from the connection string and pool, or turn SSL on at the server',
    ],
  ],
  [
    ({ code }) => typeof code === 'string' && /CERT|SELF_SIGNED|^ERR_TLS|^ERR_SSL/.test(code),
    [
      'the TLS connection to Postgres failed',
      "give the pool the server's CA (ssl: { ca }) or the host name its certificate names",
    ],
  ],
];

// Every fix of a setup error, looked through in order.
const FIXES = [...SETUP_FIXES, ...LOGIN_FIXES];

// Why the pool cannot reach Postgres at all, when it never has: a wrong address rather than an outage.
const ADDRESS_FIXES: Readonly<Record<string, Fix>> = {
  ECONNREFUSED: [
    'nothing accepts connections at the Postgres address',
    'check the host and port of the connection string, and that Postgres runs there',
  ],
  ENOTFOUND: ['the Postgres host name does not resolve', "check the connection string's host"],
  EAI_AGAIN: ['the Postgres host name does not resolve', "check the connection string's host"],
  // A Unix socket (a host that is a directory: a local server, a Cloud SQL proxy's /cloudsql/...).
  ENOENT: [
    'no Postgres socket is at that path',
    "check the connection string's socket directory (its host) and port, and that Postgres (or its proxy) runs there",
  ],
  EACCES: [
    'the Postgres socket may not be opened by this user',
    "run the app as a user the socket's permissions let in (unix_socket_group, unix_socket_permissions)",
  ],
};

// No answer at all in time (the store's deadline, the pool's connectionTimeoutMillis) from an address that never
// answered: a host that drops the packets, as a firewall or a security group not yet opened does.
const SILENT_ADDRESS: Fix = [
  'Postgres has never answered at this address',
  'check the host and port of the connection string, that Postgres runs there, and that no firewall (a security group) drops connections to it from this host',
];
/**
 * pg's words for a wait for a connection of a full pool that connectionTimeoutMillis cut short.
 * @example
 * if ((error as Error).message === POOL_WAIT_TIMEOUT) late?.();
 */
export const POOL_WAIT_TIMEOUT = 'timeout exceeded when trying to connect';
// pg's words for a connect that connectionTimeoutMillis cut short, and for that wait.
const CONNECT_TIMEOUTS = new Set([
  'Connection terminated due to connection timeout',
  'timeout expired',
  POOL_WAIT_TIMEOUT,
]);
const unanswered = ({ code, message }: { code?: unknown; message: string }): boolean =>
  code === 'store_unavailable' || CONNECT_TIMEOUTS.has(message);

/**
 * The error a store statement failed with, or, when the store is set up wrong (its table missing: `migrate()` never
 * ran on this database or schema, or search_path hides it; its table's schema missing; a read-only server; a login
 * Postgres refuses; an address where no Postgres ever answered, refusing or silent, unless `reached`), a
 * `ConfigurationError` that says so with the fix, the server's error as its `cause`.
 * @example
 * const rows = await pool.query(text, values).then((result) => result.rows, (error) => { throw explained(error); });
 */
export function explained(error: unknown, reached = true): unknown {
  if (!(error instanceof Error)) return error;
  const { code } = error as { code?: unknown };
  const fix: Fix | undefined =
    FIXES.find(([matches]) => matches(error))?.[1] ??
    (reached
      ? undefined
      : unanswered(error)
        ? SILENT_ADDRESS
        : typeof code === 'string'
          ? ADDRESS_FIXES[code]
          : undefined);
  if (fix === undefined) return error;
  const [what, how] = fix;
  // The store's own deadline speaks with the package's name already: said once in the line, and first when it is
  // all there is to say (no answer), then why.
  const words = error.message.replace(/^workforce-webhooks: /, '');
  const line = fix === SILENT_ADDRESS ? `${words} (${what}): ${how}` : `${what} (${words}): ${how}`;
  return Object.assign(new ConfigurationError(line), { cause: error });
}
