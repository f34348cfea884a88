// `workforce-webhooks dead-letters`: list, replay or discard a deployed BullMQ queue's dead letters, without the app.
import { notRedisUrl } from '../adapters/redis-url.js';
import { type BulkProgress, discardDeadLetters, replayDeadLetters } from '../src/dead-letter-bulk.js';
import type { DeadLetter, DeadLetterFilter } from '../src/dead-letters.js';
import { errorClassOf } from '../src/dead-letters.js';
import { ConfigurationError } from '../src/errors.js';
import type { EventQueue } from '../src/queue.js';
import { type CliIo, integer, parse, required, UsageError } from './io.js';
import { progressBar } from './progress-bar.js';
import { formatTable } from './table.js';
import { withScheme } from './url.js';

/**
 * Help text of `dead-letters`.
 * @example
 * io.stdout(DEAD_LETTERS_USAGE);
 */
export const DEAD_LETTERS_USAGE = `Usage: workforce-webhooks dead-letters <list|replay|discard> --redis <redis://...> --queue <name> [options]

Reads the dead letters of a deployed BullMQ queue (workforce-webhooks/bullmq) straight from Redis: no app, no
handlers. The app's own workers run what replay queues again. Needs the bullmq package. Exits 1 when Redis cannot
be reached: it refuses the connection, or leaves a read, a replay or a discard unanswered for 10 s. Exits 2 when
that Redis holds no queue of that --queue and --prefix (a mistyped name reads as no queue, not as an empty one), or
is a read-only replica (give its primary). Ctrl-C during a replay or discard starts no letter more, waits for those
under way, says how many were done and how many stay dead letters, and exits 130; a second Ctrl-C quits at once.

  list      one page of dead letters, newest first, as a table; the last line gives the next page's --cursor
  replay    queue every matching dead letter again, each exactly once (also with two replays at the same time)
  discard   drop every matching dead letter for good

Options:
  --redis        the Redis URL of the queue
  --queue        the queue's name (createBullmqQueue's name; default there: workforce-webhooks)
  --prefix       BullMQ's key prefix (default: bull)
  --type         an event type, or a prefix.* pattern (leave.*)
  --since        only those whose last failure was at or after this ISO 8601 time
  --until        only those whose last failure was before this ISO 8601 time
  --limit        list: rows per page (default: 50, at most 1000)
  --cursor       list: the page after the one that printed this cursor
  --concurrency  replay, discard: dead letters handled at once (default: 10, at most 100)
  --yes          replay, discard: do not ask for confirmation (needed when standard input is not a terminal)
  -h, --help     show this help
`;

const ACTIONS = ['list', 'replay', 'discard'] as const;

// Each worker of a replay or discard holds one Redis round trip at a time, and Redis runs one command at a time:
// past this, more workers only queue behind Redis, they do not go faster.
const MAX_CONCURRENCY = 100;

/**
 * Runs `dead-letters`; resolves with the exit code.
 * @example
 * await deadLetters(['list', '--redis', 'redis://localhost:6379', '--queue', 'webhooks'], io);
 */
export async function deadLetters(argv: readonly string[], io: CliIo): Promise<number> {
  // The action comes first; the options after it.
  const [first, ...rest] = argv;
  const action = ACTIONS.find((each) => each === first);
  if (action === undefined && first !== undefined && !first.startsWith('-'))
    throw new UsageError(`unknown action ${JSON.stringify(first)}; actions: ${ACTIONS.join(', ')}`);
  const { values } = parse(action === undefined ? argv : rest, {
    redis: { type: 'string' },
    queue: { type: 'string' },
    prefix: { type: 'string' },
    type: { type: 'string' },
    since: { type: 'string' },
    until: { type: 'string' },
    limit: { type: 'string' },
    cursor: { type: 'string' },
    concurrency: { type: 'string' },
    yes: { type: 'boolean', short: 'y' },
  });
  if (values.help) {
    io.stdout(DEAD_LETTERS_USAGE);
    return 0;
  }
  if (action === undefined) throw new UsageError(`say what to do first: ${ACTIONS.join(', ')}`);
  const redis = required(values.redis, '--redis');
  const notUrl = notRedisUrl(redis);
  if (notUrl !== undefined) throw new UsageError(`--redis: ${notUrl}`);
  const name = required(values.queue, '--queue');
  const filter: DeadLetterFilter = {
    type: values.type,
    since: time(values.since, '--since'),
    until: time(values.until, '--until'),
  };
  const limit = integer(values.limit, '--limit', 50);
  const concurrency = integer(values.concurrency, '--concurrency', 10);
  if (limit < 1 || concurrency < 1) throw new UsageError('--limit and --concurrency must be at least 1');
  if (concurrency > MAX_CONCURRENCY)
    throw new UsageError(`--concurrency must be at most ${MAX_CONCURRENCY}, got ${concurrency}`);

  // bullmq is an optional peer: loaded only by this command.
  const [{ createBullmqQueue }, { queueUsed }, { refuseReplica }] = await Promise.all([
    import('../adapters/bullmq.js'),
    import('../adapters/bullmq-admin.js'),
    import('./redis-role.js'),
  ]).catch(() => {
    throw new UsageError('dead-letters needs the bullmq package: npm install bullmq');
  });
  // Before the queue opens a connection: on a replica its writes fail, and its connections there outlive its close,
  // so the command would never end.
  await refuseReplica(redis).catch((error: unknown) => {
    throw explained(error, redis);
  });
  // Never started: this queue runs no job, it only reads, replays and discards the queue's dead letters.
  const queue = createBullmqQueue({ connection: redis, name, prefix: values.prefix });
  // Nothing found: a mistyped --queue or --prefix reads as an empty queue, so it is told apart (only then: one more
  // round trip, on a connection of its own).
  const found = async (): Promise<void> => {
    const prefix = values.prefix ?? 'bull';
    if (!(await queueUsed(redis, name, prefix)))
      throw new UsageError(
        `no queue ${name} in this Redis: nothing under ${prefix}:${name}: (a queue that ever took an event has keys there); check --queue (createBullmqQueue's name, default workforce-webhooks) and --prefix (its prefix option, default bull)`,
      );
  };
  try {
    if (action === 'list') return await list(queue, { ...filter, limit, cursor: values.cursor }, io, found);
    const total = await countOf(queue, filter);
    const what = `${total} dead letter${total === 1 ? '' : 's'} of queue ${name}${describe(filter)}`;
    if (total === 0) {
      await found();
      io.stdout(`no dead letters of queue ${name}${describe(filter)}\n`);
      return 0;
    }
    if (!values.yes) {
      if (io.interactive !== true || io.lines === undefined)
        throw new UsageError(
          `${action} of ${what} needs --yes: standard input is not a terminal, so it cannot be confirmed`,
        );
      if (!(await confirm(`${action === 'replay' ? 'Replay' : 'Discard'} ${what}? [y/N] `, io))) {
        io.stderr('nothing done\n');
        return 1;
      }
    }
    // Ctrl-C (or SIGTERM) starts no letter more and waits for those under way (each at most Redis's deadline), so
    // the count said is what was done; a second Ctrl-C ends the process at once, as the handler is gone. Taken before
    // the bar hides the cursor: a Ctrl-C as it shows would otherwise end the process with the cursor hidden.
    const interrupt = io.signal;
    const { bulk, onProgress: show, stop } = progressBar(action, total, io);
    const interrupted = (): void => {
      stop();
      io.stderr(
        `stopping: waiting for the ${action === 'replay' ? 'replays' : 'discards'} under way (Ctrl-C again to quit at once)\n`,
      );
    };
    interrupt?.addEventListener('abort', interrupted, { once: true });
    const onProgress = (progress: BulkProgress): void => {
      show(progress);
      if (interrupt?.aborted === true) throw new Interrupted();
    };
    try {
      if (action === 'replay') {
        const { replayed, failed } = await replayDeadLetters(queue, filter, { concurrency, onProgress });
        stop();
        io.stdout(`replayed ${replayed}, failed to enqueue ${failed}${others(bulk())}\n`);
        return failed > 0 ? 1 : 0;
      }
      const discarded = await discardDeadLetters(queue, filter, { concurrency, onProgress });
      stop();
      io.stdout(`discarded ${discarded}${others(bulk())}\n`);
      return bulk().failed > 0 ? 1 : 0;
    } catch (error) {
      if (interrupt?.aborted !== true) throw error;
      // Stopped between letters: each one is replayed or discarded whole, or not at all.
      const { succeeded, failed, done } = bulk();
      const did =
        action === 'replay' ? `replayed ${succeeded}, failed to enqueue ${failed}` : `discarded ${succeeded}`;
      const left = Math.max(total - done, 0) + failed;
      io.stderr(
        `stopped: ${did}${others(bulk())}; the other ${left} stay dead letters: run the same command again for them\n`,
      );
      return 130;
    } finally {
      interrupt?.removeEventListener('abort', interrupted);
      stop();
    }
  } catch (error) {
    throw explained(error, redis);
  } finally {
    await queue.close({ timeoutMs: 5000 });
  }
}

// The queue's failures in the CLI's words.
function explained(error: unknown, redis: string): unknown {
  // The queue's own words name the library; the URL is not repeated, since it may hold a password. A refused
  // connection and a Redis silent past the queue's admin deadline (10 s a call) both come as queue_unavailable.
  if ((error as { code?: unknown }).code === 'queue_unavailable')
    return new Error(
      /out of memory/.test((error as Error).message)
        ? 'Redis at --redis is out of memory (maxmemory): it refuses writes; free memory or raise maxmemory, then run this again'
        : (refusedLogin((error as Error).message) ??
            `cannot reach Redis at --redis${redisAdvice(redis, (error as Error).cause)}`),
      { cause: error },
    );
  // A value the queue refuses (a --cursor no page printed): the query's fields are named like the options.
  if (error instanceof ConfigurationError)
    return new UsageError(error.message.replace(/^workforce-webhooks: deadLetters (\w+)/, '--$1'), {
      cause: error,
    });
  return error;
}

// Thrown from the progress callback on Ctrl-C: the bulk call starts no letter more and rejects once those under way end.
class Interrupted extends Error {}

// Why Redis was not reached, from the connection error's code, with what to do; only the host and port are shown
// (the URL may hold a password). Nothing for an accepted connection left silent: the queue's deadline ended it.
function redisAdvice(redis: string, cause: unknown): string {
  const code = (cause as { code?: unknown } | undefined)?.code;
  // ioredis takes `localhost:6379` as well, which a URL parser reads as the scheme `localhost:` and no host.
  const url = withScheme(redis, 'redis')?.url ?? redis;
  if (typeof code !== 'string' || !URL.canParse(url)) return '';
  const { hostname, port } = new URL(url);
  const at = `${hostname}:${port || '6379'}`;
  if (code === 'ECONNREFUSED')
    return ` (${at}): nothing listens there; start Redis, or fix the host and port in --redis; error code ${code}`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return ` (${at}): the host name ${hostname} does not resolve; check its spelling in --redis; error code ${code}`;
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH' || code === 'ETIMEDOUT')
    return ` (${at}): no route to it; check the address, and any firewall or VPN in between; error code ${code}`;
  return ` (${at}); error code ${code}`;
}

// A Redis that answered but refused the login: reached, so not "cannot reach", and the fix is in --redis itself.
function refusedLogin(message: string): string | undefined {
  if (/\bNOAUTH\b/.test(message))
    return 'Redis at --redis requires a password and --redis gives none (NOAUTH): put it in the URL before the host, as :password@host:port';
  if (/\bWRONGPASS\b/.test(message))
    return 'Redis at --redis refused the user name or password in --redis (WRONGPASS): check them, written before the host as user:password@host:port';
  return undefined;
}

// What the CLI takes is an ISO 8601 time; the library also takes a bare number, which here would be a typo.
function time(value: string | undefined, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(Date.parse(value)))
    throw new UsageError(
      `${name} must be an ISO 8601 time such as 2026-11-23T09:00:00Z, got ${JSON.stringify(value)}`,
    );
  return value;
}

function describe({ type, since, until }: DeadLetterFilter): string {
  const parts = [
    type === undefined ? '' : ` of type ${type}`,
    since === undefined ? '' : ` since ${String(since)}`,
    until === undefined ? '' : ` until ${String(until)}`,
  ];
  return parts.join('');
}

const others = ({ skipped }: BulkProgress): string =>
  skipped === 0 ? '' : ` (${skipped} taken meanwhile by another replay or discard)`;

async function countOf(queue: EventQueue, filter: DeadLetterFilter): Promise<number> {
  let count = 0;
  let cursor: string | undefined;
  do {
    const page = await queue.deadLetters({ ...filter, limit: 1000, cursor });
    count += page.items.length;
    cursor = page.cursor;
  } while (cursor !== undefined);
  return count;
}

async function confirm(question: string, io: CliIo): Promise<boolean> {
  io.stderr(question);
  const stop = new AbortController();
  try {
    for await (const line of io.lines!(stop.signal)) return /^y(es)?$/i.test(line.trim());
    return false;
  } finally {
    stop.abort();
  }
}

const COLUMNS = ['id', 'type', 'occurredAt', 'attempts', 'error', 'failed at'] as const;

function row(letter: DeadLetter): string[] {
  return [
    letter.event.id,
    letter.event.type,
    letter.event.occurredAt,
    String(letter.attempts),
    errorClassOf(letter.error),
    new Date(letter.failedAt).toISOString(),
  ];
}

async function list(
  queue: EventQueue,
  query: Parameters<EventQueue['deadLetters']>[0],
  io: CliIo,
  found: () => Promise<void>,
): Promise<number> {
  const page = await queue.deadLetters(query);
  if (page.items.length === 0 && page.cursor === undefined && query?.cursor === undefined) await found();
  io.stdout(formatTable([COLUMNS, ...page.items.map(row)]));
  // With a type filter a page may come back short (even empty) while more follow: the cursor says so.
  io.stdout(
    page.cursor === undefined
      ? `${page.items.length} shown; no more pages\n`
      : `${page.items.length} shown; next page: --cursor ${page.cursor}\n`,
  );
  return 0;
}
