// The user's pg pool behind the caller's deadline: queries and checked-out clients that fail in time, never hang.
import type { Pool, PoolClient, QueryResult, QueryResultRow } from 'pg';
import { withDeadline } from '../src/deadline.js';
import { ConfigurationError } from '../src/errors.js';
import type { Logger } from '../src/logger.js';

// SQLSTATE undefined_table: a statement of the store named a table that is not there.
const UNDEFINED_TABLE = '42P01';

// What is wrong and how to put it right: said as `<what> (<the server's words>): <how>`.
type Fix = readonly [what: string, how: string];

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

// Why the pool cannot reach Postgres at all, when it never has: a wrong address rather than an outage.
const ADDRESS_FIXES: Readonly<Record<string, Fix>> = {
  ECONNREFUSED: [
    'nothing accepts connections at the Postgres address',
    'check the host and port of the connection string, and that Postgres runs there',
  ],
  ENOTFOUND: ['the Postgres host name does not resolve', "check the connection string's host"],
  EAI_AGAIN: ['the Postgres host name does not resolve', "check the connection string's host"],
};

// No answer at all in time (the store's deadline, the pool's connectionTimeoutMillis) from an address that never
// answered: a host that drops the packets, as a firewall or a security group not yet opened does.
const SILENT_ADDRESS: Fix = [
  'Postgres has never answered at this address',
  'check the host and port of the connection string, that Postgres runs there, and that no firewall (a security group) drops connections to it from this host',
];
// pg's words for a wait for a connection of a full pool that connectionTimeoutMillis cut short.
const POOL_WAIT_TIMEOUT = 'timeout exceeded when trying to connect';
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
 * ran on this database or schema; a login Postgres refuses; an address where no Postgres ever answered, refusing or
 * silent, unless `reached`), a `ConfigurationError` that says so with the fix, the server's error as its `cause`.
 * @example
 * const rows = await pool.query(text, values).then((result) => result.rows, (error) => { throw explained(error); });
 */
export function explained(error: unknown, reached = true): unknown {
  if (!(error instanceof Error)) return error;
  const { code } = error as { code?: unknown };
  const fix: Fix | undefined =
    code === UNDEFINED_TABLE
      ? [
          "the Postgres store's table is missing",
          'run `await store.migrate()` on start, or `npx workforce-webhooks migrate --postgres $DATABASE_URL` once',
        ]
      : (LOGIN_FIXES.find(([matches]) => matches(error))?.[1] ??
        (reached
          ? undefined
          : unanswered(error)
            ? SILENT_ADDRESS
            : typeof code === 'string'
              ? ADDRESS_FIXES[code]
              : undefined));
  if (fix === undefined) return error;
  const [what, how] = fix;
  // The store's own deadline speaks with the package's name already: said once in the line, and first when it is
  // all there is to say (no answer), then why.
  const words = error.message.replace(/^workforce-webhooks: /, '');
  const line = fix === SILENT_ADDRESS ? `${words} (${what}): ${how}` : `${what} (${words}): ${how}`;
  return Object.assign(new ConfigurationError(line), { cause: error });
}

/** A client of the pool, and `finish` to give it back once (whatever became of `client.release`); `ours` till then. */
export interface CheckedOut {
  readonly client: PoolClient;
  /** Gives the client back, once; with an error it is dropped, which rolls back what it left open on the server. */
  readonly finish: (error?: Error) => void;
  readonly ours: () => boolean;
}

/** The calls `createBoundPool` makes, each failing with `store_unavailable` past its deadline. */
export interface BoundPool {
  /** `answer`, or a rejection once `timeoutMs` pass first; `expired` is given the answer still pending then. */
  inTime<T>(answer: Promise<T>, expired?: (pending: Promise<T>) => void): Promise<T>;
  run<R extends QueryResultRow>(text: string, values?: unknown[]): Promise<QueryResult<R>>;
  query<R extends QueryResultRow>(text: string, values: unknown[]): Promise<R[]>;
  checkout(): Promise<CheckedOut>;
  /** `explained(error)`, knowing whether this pool ever reached Postgres (a refused connection then is an outage). */
  explain(error: unknown): unknown;
}

/**
 * What says, once each, why a store call found no connection of a `pg.Pool` in time, with the fix: every connection
 * held by the store's own transactions (a pool no larger than the events that run at once), or a pool with no
 * `connectionTimeoutMillis` (a silent host keeps its connects for minutes); undefined for a pool-like object.
 * @example
 * const late = poolDiagnosis(pool, logger, () => held); // called when a call waited past its deadline
 */
export function poolDiagnosis(pool: Pool, logger: Logger, held: () => number): (() => void) | undefined {
  // pg's Pool keeps its options there (`max` filled in); a pool-like object without them is left alone.
  const { options } = pool as { options?: { connectionTimeoutMillis?: unknown; max?: unknown } };
  if (options === undefined) return undefined;
  const max = typeof options.max === 'number' ? options.max : 10;
  const bound = options.connectionTimeoutMillis;
  // A host that drops packets (a firewall, a failover) leaves pg's connects to it waiting for the operating system's
  // connect timeout (about 2 minutes on Linux), or for ever once accepted, each holding a place of the pool: the
  // store's deadline answers 503 meanwhile, but the pool serves nothing till they give up, Postgres back or not.
  let toldConnects = typeof bound === 'number' && bound > 0;
  // Handlers' transactions holding every connection: the claims and the lease renewals of the running events wait
  // for one, and a lease that cannot be renewed stops its handlers, which looks like a store outage and is not.
  let toldFull = false;
  return () => {
    if (held() >= max) {
      if (toldFull) return;
      toldFull = true;
      logger.warn(
        { max },
        `workforce-webhooks: every connection of the pg pool (max ${max}) is held by a running handler's ctx.transaction(), so the store's claims and lease renewals wait for one and fail; give the pool more connections than the events that run at once (the queue's concurrency, or in inline mode the deliveries in flight): new pg.Pool({ ..., max: ${max * 2} })`,
      );
      return;
    }
    if (toldConnects) return;
    toldConnects = true;
    logger.warn(
      {},
      'workforce-webhooks: a Postgres store call got no answer in time, and the pg pool has no connectionTimeoutMillis: a host that stops answering (a firewall, a failover) then holds its connects, and every call waiting on them, for minutes, so deliveries get 503 long after Postgres is back; give the pool connectionTimeoutMillis (new pg.Pool({ ..., connectionTimeoutMillis: 5000 }))',
    );
  };
}

/**
 * The caller's deadline, not the pool's good will: a full pool or a silent server fails the call in time, and
 * query_timeout has pg drop the connection of a statement that outlived it.
 * @example
 * const { query } = createBoundPool({ pool, timeoutMs: 2000 });
 * const rows = await query('SELECT 1 AS one', []);
 */
export function createBoundPool({
  pool,
  timeoutMs,
  logger,
}: {
  readonly pool: Pool;
  readonly timeoutMs: number;
  /** Where a call that waited for a connection past its deadline says why, once (see `poolDiagnosis`). */
  readonly logger?: Logger;
}): BoundPool {
  // The clients this store holds checked out (handlers' transactions, a migration), for `late` to tell a pool they
  // use up from a silent host.
  let held = 0;
  const late = logger === undefined ? undefined : poolDiagnosis(pool, logger, () => held);
  const inTime = <T>(answer: Promise<T>, expired?: (pending: Promise<T>) => void): Promise<T> =>
    withDeadline(() => answer, timeoutMs, 'store_unavailable', expired);
  const run = <R extends QueryResultRow>(text: string, values: unknown[] = []): Promise<QueryResult<R>> =>
    inTime(pool.query<R>({ text, values, query_timeout: timeoutMs } as never), late);
  // Whether Postgres ever answered: till then a refused connection is a wrong address, said with the fix.
  let reached = false;
  const explain = (error: unknown): unknown => explained(error, reached);
  const rowsOf = <R extends QueryResultRow>(result: QueryResult<R>): R[] => {
    reached = true;
    return result.rows;
  };
  const rethrowExplained = (error: unknown): never => {
    // pg's own bound on the wait for a connection (connectionTimeoutMillis) ran out first.
    if ((error as Error | undefined)?.message === POOL_WAIT_TIMEOUT) late?.();
    throw explain(error);
  };
  const query = <R extends QueryResultRow>(text: string, values: unknown[]): Promise<R[]> =>
    run<R>(text, values).then(rowsOf, rethrowExplained);

  const checkout = async (): Promise<CheckedOut> => {
    let client: PoolClient;
    try {
      // A connection that comes after the deadline goes back to the pool.
      client = await inTime(pool.connect(), (pending) => {
        late?.();
        void pending.then(
          (connection) => connection.release(),
          () => {},
        );
      });
    } catch (error) {
      if ((error as Error | undefined)?.message === POOL_WAIT_TIMEOUT) late?.();
      throw explain(error);
    }
    reached = true;
    held++;
    // A checked-out client's lost connection is emitted on the client, not the pool: with no listener it would
    // crash the process. Its next query rejects with the same error, which fails the call.
    const lost = (): void => {};
    client.on('error', lost);
    // The pool's release for this checkout, kept aside: what a caller does to `client.release` meanwhile (a
    // handler's transaction client has it guarded) cannot change how the client goes back.
    const release = client.release;
    let open = true;
    const finish = (error?: Error): void => {
      if (!open) return;
      open = false;
      held--;
      client.off('error', lost);
      release.call(client, error);
    };
    return { client, finish, ours: () => open };
  };

  return { inTime, run, query, checkout, explain };
}
