// `workforce-webhooks migrate`: create the Postgres store's table before the first deploy (or let every start do it).
import { tableNames } from '../adapters/postgres-names.js';
import { connectionStringProblem } from '../adapters/postgres-url.js';
import { ConfigurationError } from '../src/errors.js';
import { type CliIo, parse, required, UsageError } from './io.js';
import { shownValue, withScheme } from './url.js';

/**
 * Help text of `migrate`.
 * @example
 * io.stdout(MIGRATE_USAGE);
 */
export const MIGRATE_USAGE = `Usage: workforce-webhooks migrate --postgres <postgres://...> [--table <name>]

Creates the Postgres dedupe store's table and index when missing (workforce-webhooks/postgres); running it
again changes nothing. Fails after 5 seconds without an answer from the database. Needs the pg package.

Options:
  --postgres    the database URL (postgres:// or postgresql://)
  --table       the table, optionally schema.table: letters, digits and underscores, at most 63 characters
                each (default: workforce_webhook_events)
  -h, --help    show this help
`;

// Connecting, each statement and the store's own calls: a database that stops answering fails the command.
const TIMEOUT_MS = 5000;

/**
 * Runs `migrate`; resolves with the exit code.
 * @example
 * await migrate(['--postgres', 'postgres://localhost/app'], io);
 */
export async function migrate(argv: readonly string[], io: CliIo): Promise<number> {
  const { values } = parse(argv, { postgres: { type: 'string' }, table: { type: 'string' } });
  if (values.help) {
    io.stdout(MIGRATE_USAGE);
    return 0;
  }
  const url = databaseUrl(required(values.postgres, '--postgres'));
  // The store checks the name too, but only once pg is loaded and a pool made: a typo is a usage mistake.
  if (values.table !== undefined) {
    try {
      tableNames(values.table);
    } catch {
      throw new UsageError(
        `--table must be a name or schema.name of letters, digits and underscores, at most 63 characters each, got ${JSON.stringify(values.table)}`,
      );
    }
  }
  // pg is an optional peer: loaded only by this command.
  const [{ default: pg }, { createPostgresStore }] = await Promise.all([
    import('pg').catch(() => {
      throw new UsageError('migrate needs the pg package: npm install pg');
    }),
    import('../adapters/postgres.js'),
  ]);
  // The pool's own limits too: `pool.end()` waits for a connection still being made, or a query still out.
  const pool = new pg.Pool({
    connectionString: url,
    max: 1,
    connectionTimeoutMillis: TIMEOUT_MS,
    query_timeout: TIMEOUT_MS,
  });
  pool.on('error', () => {});
  try {
    const store = createPostgresStore({
      pool,
      table: values.table,
      timeoutMs: TIMEOUT_MS,
      cleanupIntervalMs: 0,
    });
    await store.migrate().catch((error: unknown) => {
      // What the database answers (no such database, a refused password) is a failed request, exit 1, however the
      // store classes it: the options were checked above, so --help has nothing to add.
      if (error instanceof ConfigurationError) throw new Error(error.message, { cause: error });
      throw error;
    });
    io.stdout(`migrated ${values.table ?? 'workforce_webhook_events'}\n`);
    return 0;
  } finally {
    await pool.end();
  }
}

// pg reads anything that is not a URL as a path under the host "base", so a typo such as `localhost/app` would fail
// as `getaddrinfo ENOTFOUND base`, a network error: it is a usage mistake, said with the forms pg takes.
// `//user:pw@host/db` is no path: pg would try it as a socket directory and print it, password and all.
function databaseUrl(value: string): string {
  // pg's socket form is `socket:/directory?db=name`, with no `//`.
  const scheme =
    /^([a-z][a-z0-9+.-]*):\/\//i.exec(value)?.[1]?.toLowerCase() ??
    (/^socket:/i.test(value) ? 'socket' : undefined);
  const path = value.startsWith('/') && !value.startsWith('//');
  if (scheme === 'postgres' || scheme === 'postgresql' || scheme === 'socket' || path) {
    // A password with a character the URL reserves: pg would fail as "Invalid URL", or connect to the user name.
    const problem = connectionStringProblem(value);
    if (problem !== undefined) throw new UsageError(`--postgres ${problem[0]}: ${problem[1]}`);
    return value;
  }
  // Without a scheme: the URL it most likely is, shown without what may be a password.
  const guess = withScheme(value, 'postgres');
  if (guess !== undefined)
    throw new UsageError(
      `--postgres has no scheme: write ${guess.credentials ? guess.url.replace('://', '://***@') : guess.url}`,
    );
  throw new UsageError(
    `--postgres must be a postgres:// or postgresql:// URL (or a socket: URL or path), got ${JSON.stringify(shownValue(value))}`,
  );
}
