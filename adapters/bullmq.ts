// The BullMQ queue: an accepted event is a job in Redis (or Postgres, on BullMQ's backend) before the 202, kept through crashes.
import { type BackendFactory, type IQueueBackend, Queue, Worker, withBackend } from 'bullmq';
import type { Redis, RedisOptions } from 'ioredis';
import { errorClassOf } from '../src/dead-letters.js';
import { ConfigurationError, WebhookError } from '../src/errors.js';
import {
  type Backoff,
  type DeadLetterPage,
  type DeadLetterQuery,
  type EventQueue,
  exponentialBackoff,
  type QueuedEvent,
  type QueueHooks,
} from '../src/queue.js';
import { DEFAULT_DONE_TTL_MS } from '../src/store.js';
import { closeTimeoutProblem, MAX_TIMER_MS } from '../src/timer-limit.js';
import { adminCall, adminCalls } from './bullmq-admin.js';
import { openRedis, outlasts, quitWithin, readiness } from './bullmq-connections.js';
import { letterOf, readDeadLetters } from './bullmq-dead-letters.js';
import { discardLetter } from './bullmq-discard.js';
import { watchForEmptyRedis } from './bullmq-emptied.js';
import { isEventData, type JobData } from './bullmq-job.js';
import { pacedWorker } from './bullmq-paced-worker.js';
import { postgresPool } from './bullmq-postgres-letter.js';
import { encodingProblem, refusedText, storableJob, storedJob } from './bullmq-postgres-text.js';
import { createJobRunner } from './bullmq-processor.js';
import { replayLetter } from './bullmq-replay.js';
import { SuccessRecords } from './bullmq-success.js';
import {
  type ConnectionError,
  connectionFailure,
  firstToSay,
  isConnectionFailure,
  readyAgain,
  withoutPassword,
} from './redis-connection.js';
import { watchEviction } from './redis-eviction.js';
import { ignoredUrlOption, notRedisUrl } from './redis-url.js';

/** Options of `createBullmqQueue`. */
export interface BullmqQueueOptions {
  /**
   * Your ioredis client (never closed; the queue opens its own connections from it), its options, or a URL: a single
   * Redis, not a Cluster. The queue's connections always reconnect (a `retryStrategy` that gives up is not followed),
   * and its worker's waits for jobs take no `commandTimeout`.
   * With `backend: createPostgresBackend`: what that backend takes, e.g. `{ connectionString, migrate: true }`.
   */
  readonly connection: Redis | RedisOptions | string | object;
  /**
   * BullMQ's datastore: Redis when left out, or `createPostgresBackend` (from `bullmq`) to keep the jobs in
   * Postgres with no Redis at all.
   */
  readonly backend?: BackendFactory<IQueueBackend, never>;
  /** The BullMQ queue name: one per receiver, the same on every instance of it. Default `workforce-webhooks`. */
  readonly name?: string;
  /** BullMQ's key prefix. Default `bull`. */
  readonly prefix?: string;
  /** Jobs this instance runs at once. Default 10. */
  readonly concurrency?: number;
  /** Attempts per event before it becomes a dead letter. Default 5. */
  readonly attempts?: number;
  /** Delay before each retry. Default exponential from 1 s to 5 min, with jitter. */
  readonly backoff?: Backoff;
  /** One attempt's time limit; its `ctx.signal` is aborted then. Default 30 000. */
  readonly handlerTimeoutMs?: number;
  /** How long completed jobs are kept: at least the receiver's `doneTtlMs`, so a redelivery never runs twice. Default 72 h. */
  readonly keepCompletedMs?: number;
  /**
   * A running job's lock; a dead instance's jobs are taken over once it lapses. Default 10 000: with the stalled
   * check below, a killed instance's jobs run again within about 20 s. A worker whose event loop is blocked past it
   * loses the job (its `ctx.signal` is aborted) and another instance runs it again.
   */
  readonly lockDurationMs?: number;
  /** How often a running job's lock is renewed. Default a third of `lockDurationMs`: one renewal may be missed. */
  readonly lockRenewMs?: number;
  /** How often workers look for jobs whose lock lapsed (one Redis script per worker each time). Default 5000. */
  readonly stalledIntervalMs?: number;
  /** Times a job may be taken over from a dead worker before it fails. Default 1 (BullMQ's). */
  readonly maxStalledCount?: number;
}

const JOB_NAME = 'event';
// The states of a job still to be processed: the queue's depth.
const HELD_STATES = ['waiting', 'delayed', 'active', 'prioritized', 'waiting-children'] as const;
const BACKOFF_TYPE = 'workforce-webhooks';
const SHUTDOWN = 'the receiver closed during this attempt';
// BullMQ's error for a command on a job whose key is gone: Redis was emptied under it, or the key deleted by hand.
const MISSING_JOB = /^Missing key for job (\S+?)\. (\w+)/;

// A Redis user whose ACL leaves out the queue's keys or commands: refused at every fetch (once a second), for good.
const NO_PERMISSION = /^NOPERM\b/;

// The ioredis keyPrefix of a client or its options, when one is set.
const keyPrefixOf = (connection: unknown): string | undefined => {
  const options =
    typeof (connection as { duplicate?: unknown } | null)?.duplicate === 'function'
      ? (connection as { options?: unknown }).options
      : connection;
  const keyPrefix = (options as { keyPrefix?: unknown } | null | undefined)?.keyPrefix;
  return typeof keyPrefix === 'string' && keyPrefix !== '' ? keyPrefix : undefined;
};

/**
 * The durable queue for several instances: `enqueue` resolves once the job (id = event id) is stored in Redis,
 * workers on every instance run it, a dead instance's jobs are taken over, exhausted jobs are the dead letters.
 * Redis must run with `maxmemory-policy noeviction`.
 * @example
 * createReceiver({ secret, store: createRedisStore({ client }), queue: createBullmqQueue({ connection: client }) });
 */
export function createBullmqQueue({
  connection,
  backend,
  name = 'workforce-webhooks',
  prefix,
  concurrency = 10,
  attempts = 5,
  backoff = exponentialBackoff(),
  handlerTimeoutMs = 30_000,
  keepCompletedMs = DEFAULT_DONE_TTL_MS,
  lockDurationMs = 10_000,
  lockRenewMs = Math.max(1, Math.floor(lockDurationMs / 3)),
  stalledIntervalMs = 5000,
  maxStalledCount = 1,
}: BullmqQueueOptions): EventQueue {
  if (connection === undefined || connection === null)
    throw new ConfigurationError(
      'createBullmqQueue needs `connection`: an ioredis client, its options or a URL',
    );
  // A Cluster's connections cannot be opened as the queue's own (its duplicate takes other arguments), and BullMQ's
  // keys there need a hash-tagged prefix: it would fail at the receiver's start with a BullMQ message that names
  // neither, its duplicates reconnecting for ever. Said here, before any connection is opened.
  if (backend === undefined && (connection as { isCluster?: unknown }).isCluster === true)
    throw new ConfigurationError(
      'createBullmqQueue takes a single Redis, not a Cluster: give it the URL or client of a standalone Redis ' +
        '(the Redis store may stay on the Cluster)',
    );
  // BullMQ refuses a connection with an ioredis keyPrefix (its keys have their own, `prefix`), by throwing a bare
  // error from its Queue after the queue's first connection is open, which then reconnects for ever: said here.
  const keyPrefix = backend === undefined ? keyPrefixOf(connection) : undefined;
  if (keyPrefix !== undefined)
    throw new ConfigurationError(
      `createBullmqQueue's connection has the ioredis keyPrefix ${JSON.stringify(keyPrefix)}, which BullMQ refuses: ` +
        `give the queue a client or options without keyPrefix, and its own prefix instead, e.g. prefix: ${JSON.stringify(`${keyPrefix}bull`)} ` +
        '(the Redis store may keep the client with keyPrefix)',
    );
  const url = backend === undefined ? (notRedisUrl(connection) ?? ignoredUrlOption(connection)) : undefined;
  if (url !== undefined)
    throw new ConfigurationError(`createBullmqQueue's connection cannot reach Redis: ${url}`);
  for (const [key, value] of Object.entries({
    concurrency,
    attempts,
    handlerTimeoutMs,
    lockDurationMs,
    lockRenewMs,
    stalledIntervalMs,
  })) {
    if (!Number.isInteger(value) || value < 1)
      throw new ConfigurationError(`queue ${key} must be a positive integer`);
    // A longer timer fires after 1 ms: every attempt (or lock) would end at once.
    if (key !== 'concurrency' && key !== 'attempts' && value > MAX_TIMER_MS)
      throw new ConfigurationError(
        `queue ${key} must be at most ${MAX_TIMER_MS} ms (about 24.8 days, the longest a timer waits), got ${value}`,
      );
  }
  // A lock renewed no sooner than it lapses is taken over from a live worker: every longer job would run twice.
  if (lockRenewMs >= lockDurationMs)
    throw new ConfigurationError('queue lockRenewMs must be below lockDurationMs (default: a third of it)');
  if (!Number.isInteger(maxStalledCount) || maxStalledCount < 0)
    throw new ConfigurationError('queue maxStalledCount must be a non-negative integer');
  const open = (overrides: RedisOptions): Redis => openRedis(connection, overrides);
  // Another backend takes its connection as given; only Redis gets the connections and reads made below.
  const redis = backend === undefined;
  const classes = redis
    ? { Queue, Worker }
    : (withBackend(backend) as unknown as { Queue: typeof Queue; Worker: typeof Worker });
  // The producer fails at once while Redis is away, so the delivery is answered 503 (never 202 without a job).
  const producer = redis ? open({ enableOfflineQueue: false, maxRetriesPerRequest: 1 }) : undefined;
  const queue = new classes.Queue<JobData>(name, {
    connection: (producer ?? connection) as Redis,
    ...(prefix === undefined ? {} : { prefix }),
    defaultJobOptions: {
      backoff: { type: BACKOFF_TYPE },
      removeOnComplete: { age: Math.ceil(keepCompletedMs / 1000) },
      removeOnFail: false,
    },
  });
  let worker: Worker<JobData> | undefined;
  let workerClient: Redis | undefined;
  let hooks: QueueHooks | undefined;
  let stopWatching: (() => void) | undefined;
  // A connection failure comes again on every reconnect (every few seconds while Redis is away or refuses the login),
  // from each of the queue's connections, and a refused permission at every fetch: each kind is said once, with its
  // fix, until one of them is ready again; any other error each time. Logged once started; before that (a queue
  // only read, as by the dead-letters command) the failing calls say it, and BullMQ would print each with its stack.
  // Said once per kind of the Redis itself, whichever of its clients (the store's too) said it first.
  let reached = false;
  const tls = Boolean(producer?.options.tls);
  const reachedAgain = (): void => {
    reached = true;
    if (producer !== undefined) readyAgain(producer);
  };
  producer?.on('ready', reachedAgain);
  // An error that comes again and again, by kind, with its fix; undefined for any other.
  const recurring = (error: ConnectionError): { kind: string; text: string } | undefined => {
    if (!redis) return undefined;
    if (NO_PERMISSION.test(error.message))
      return {
        kind: 'NOPERM',
        text: `the Redis user may not use the queue's keys or commands (${error.message}): allow it the keys under the queue's prefix and the commands BullMQ runs (ACL SETUSER <user> ~${prefix ?? 'bull'}:* +@all), or give the queue a prefix it may use`,
      };
    return isConnectionFailure(error) ? connectionFailure(error, tls, reached) : undefined;
  };
  // Set once the Postgres database's encoding was said to refuse BullMQ's statements: its refusals (SQLSTATE 22P05,
  // every fetch of the worker) are that, said already.
  let encodingSaid = false;
  const reportError = (error: Error): void => {
    const logger = hooks?.logger;
    if (logger === undefined) return;
    if (encodingSaid && (error as { code?: unknown }).code === '22P05') return;
    const known = recurring(error);
    if (known === undefined) {
      logger.warn({ err: withoutPassword(error), queue: name }, 'workforce-webhooks: BullMQ error');
      return;
    }
    if (producer !== undefined && !firstToSay(producer, known.kind)) return;
    logger.error(
      { kind: known.kind, queue: name },
      `workforce-webhooks: the queue's connection to Redis: ${known.text}`,
    );
  };
  queue.on('error', reportError);
  let closed = false;
  let closing: Promise<void> | undefined;
  // The onDeadLetter calls under way (where an app keeps its letters or pages someone): close() waits for them within
  // its deadline, as the memory queue's does, so an app that exits once it resolves never cuts one short.
  const burying = new Set<Promise<void>>();
  // Reads, replays and discards under way: close() lets them end before it closes the connections they use.
  const admin = adminCalls();

  // One deadline for the whole close, `timeoutMs` away. Running attempts get all of it but the last fifth (at most
  // 1 s), kept for the aborted ones to be recorded and the connections to close. A Redis that is stopped or silent
  // keeps its sockets open and its clients `ready`, so BullMQ's graceful close and `quit` would wait for it: past the
  // deadline the connections are dropped instead. Running jobs stay stored; another instance takes them over later.
  const shutDown = async (timeoutMs: number): Promise<void> => {
    closed = true;
    stopWatching?.();
    // Completions still unconfirmed are recorded now: the connections may be dropped before BullMQ confirms them.
    successes.closing();
    const deadline = performance.now() + timeoutMs;
    const left = (): number => Math.max(0, deadline - performance.now());
    const reachable = !redis || workerClient?.status === 'ready';
    if (!reachable) runner.abort(SHUTDOWN);
    const settled = Promise.allSettled([
      worker?.close(!reachable),
      admin.settled().then(() => queue.close()),
    ]);
    if (await outlasts(settled, timeoutMs - Math.min(1000, timeoutMs / 5))) {
      runner.abort(SHUTDOWN);
      // BullMQ's own connections too (its worker's blocking one, a backend's pool): not waited for.
      if (await outlasts(settled, left()))
        void Promise.allSettled([worker?.disconnect(), queue.disconnect()]);
    }
    await Promise.all([producer, workerClient].map((client) => client && quitWithin(client, left())));
    // A failure BullMQ recorded just before its connection closed is told in the turns after: counted by it then.
    await new Promise<void>((resolve) => setImmediate(resolve));
    runner.shutDown();
    if (burying.size > 0) await outlasts(Promise.all(burying), left());
  };

  const ready = producer === undefined ? undefined : readiness(producer);
  const usable = (): Promise<void> => (ready === undefined ? Promise.resolve() : ready());

  // Records of success, so that a finished job Redis hands to another worker after a stall is not run again.
  const successes = new SuccessRecords({
    client: () => workerClient,
    key: (id) => queue.toKey(`${id}:succeeded`),
    keepMs: keepCompletedMs,
    lockMs: lockDurationMs,
  });

  const runner = createJobRunner({ hooks: () => hooks!, successes, name, handlerTimeoutMs });

  // An inline run's hand-over, as if its last attempt had failed here: the attempts left, after the backoff of that
  // attempt. With none left it is stored as that failed attempt (one attempt, which the processor fails with the
  // inline failure without running the handlers), so it becomes a dead letter with the attempts made, and a replay
  // (`resetForReplay`: `opts.attempts` plus `attemptsMade`) still gets every attempt the app gave the event.
  const handedOver = (
    job: QueuedEvent,
    made: number,
    failure: unknown,
  ): [data: JobData, opts: { jobId: string; attempts: number; delay?: number }] => {
    const jobId = job.event.id;
    if (made < attempts)
      return [job, { jobId, attempts: attempts - made, delay: Math.max(0, Math.round(backoff(made))) }];
    const message = failure instanceof Error ? failure.message : String(failure);
    return [
      { ...job, attemptsMade: made - 1, lastError: errorClassOf(failure), failedInline: message },
      { jobId, attempts: 1 },
    ];
  };

  // Postgres refuses a NUL or a lone surrogate in jsonb (a free-text field of the event, a failure's message): the
  // job is added again with the event kept as its exact JSON text, rather than the event refused on every delivery.
  const add = async (
    data: JobData,
    opts: { jobId: string; attempts: number; delay?: number },
  ): Promise<void> => {
    try {
      await queue.add(JOB_NAME, data, opts);
    } catch (error) {
      if (!refusedText(error)) throw error;
      await queue.add(JOB_NAME, storableJob(data), opts);
    }
  };

  // A replay answered `queue_unavailable` at its deadline that lands later still queued the letter again: reported
  // then, as a replay answered true is.
  const lateReplay =
    (eventId: string) =>
    (pending: Promise<boolean>): void =>
      void pending.then(
        (replayed) => {
          if (replayed) hooks?.onLateReplay?.(eventId);
        },
        () => {},
      );

  return {
    start(given) {
      if (hooks !== undefined)
        throw new ConfigurationError('a queue serves one receiver; create one per receiver');
      hooks = given;
      const { logger } = given;
      // BullMQ prints its own advice on each connection; this line says what the receiver loses, once per Redis.
      if (producer !== undefined) watchEviction(producer, logger);
      // A one-byte database (LATIN1) refuses BullMQ's own statements: every delivery 503, said once with the fix.
      const pool = redis ? undefined : postgresPool(queue);
      if (pool !== undefined)
        void encodingProblem(pool).then(
          (problem) => {
            if (problem === undefined) return;
            encodingSaid = true;
            logger.error({ queue: name }, problem);
          },
          () => {},
        );
      // BullMQ's blocking fetch must wait through reconnects: maxRetriesPerRequest null, on a connection of its own,
      // with its offline queue on whatever the user's client says (enableOfflineQueue: false is the store's advice).
      // Without it, each fetch during an outage fails at once, in the same turn, and BullMQ's fetch loop asks again at
      // once: a loop of promises alone, which starves the event loop and freezes the whole process until Redis is
      // back. Nor the user's commandTimeout (a deadline for the store's claims): it would cut every blocking wait for
      // a job that outlasts it, and leave the worker idle with jobs waiting. BullMQ bounds its blocking waits itself.
      workerClient = redis
        ? open({ maxRetriesPerRequest: null, enableOfflineQueue: true, commandTimeout: undefined })
        : undefined;
      workerClient?.on('ready', reachedAgain);
      worker = new (pacedWorker(classes.Worker, runner))<JobData>(name, runner.processor, {
        connection: (workerClient ?? connection) as Redis,
        ...(prefix === undefined ? {} : { prefix }),
        concurrency,
        lockDuration: lockDurationMs,
        lockRenewTime: lockRenewMs,
        stalledInterval: stalledIntervalMs,
        maxStalledCount,
        settings: {
          backoffStrategy: (made: number, _type?: string, _error?: Error, job?: { data: QueuedEvent }) =>
            Math.max(0, Math.round(backoff(made + (job?.data.attemptsMade ?? 0)))),
        },
      });
      worker.on('locksRenewed', ({ jobIds }: { jobIds: string[] }) => {
        successes.renewed(jobIds);
      });
      worker.on('completed', (job) => {
        successes.confirmed(job.id!);
      });
      worker.on('failed', (job, error) => {
        // Another app's job (the processor logged it): neither a retry nor a dead letter of ours.
        if (job === undefined || !isEventData(job.data)) return;
        // Recorded after the close ended, which counted it as a retry already: a dead letter still is one.
        const counted = runner.recorded(job);
        if (job.attemptsMade < (job.opts.attempts ?? 1) && error.name !== 'UnrecoverableError') {
          if (!counted) given.onRetry?.(storedJob(job.data), (job.data.attemptsMade ?? 0) + job.attemptsMade);
          return;
        }
        const call = given.onDeadLetter(letterOf(job, error)).catch((failure: unknown) => {
          logger.error({ err: failure, queue: name }, 'workforce-webhooks: onDeadLetter failed');
        });
        burying.add(call);
        void call.then(() => burying.delete(call));
      });
      // A lock that lapsed (another worker may take the job) stops the handlers of the attempt that held it: told by
      // the worker (`pacedWorker`) with the lock's token, which BullMQ's `lockRenewalFailed` does not give.
      worker.on('error', (error: Error) => {
        const missing = MISSING_JOB.exec(error.message);
        if (missing === null) {
          reportError(error);
          return;
        }
        // Not a passing fault: the job's key is gone, so this event is neither completed nor retried, and when Redis
        // was emptied, every event waiting in it is lost with it.
        logger.error(
          { eventId: missing[1], step: missing[2], queue: name },
          'workforce-webhooks: a running job is gone from Redis (restarted without persistence, flushed, or its key deleted): this event is not retried; if Redis was emptied, the events waiting in it are lost too',
        );
      });
      // Looked at as often as the stalled check runs (at most once a second): a flush with no job running is said
      // within that too, not only at the next reconnect.
      if (workerClient !== undefined)
        stopWatching = watchForEmptyRedis(
          workerClient,
          queue.toKey('workforce-webhooks:since'),
          Math.max(1000, stalledIntervalMs),
          () =>
            logger.error(
              { queue: name },
              'workforce-webhooks: Redis came back empty (restarted without persistence, or flushed): the events that were waiting or running in it are lost, and their ids are no longer marked done; turn on persistence (appendonly yes)',
            ),
        );
    },
    async enqueue(job, failure) {
      if (closed) throw new WebhookError('shutting_down', 'the queue is closed');
      if (hooks === undefined) throw new ConfigurationError('the queue was not started by a receiver');
      await usable();
      // Job id = event id (a uuid, so never BullMQ's forbidden `0` or `:`): a second add of one event is a no-op.
      if (job.attemptsMade === undefined || job.attemptsMade === 0)
        await add(job, { jobId: job.event.id, attempts });
      else {
        const made = job.attemptsMade;
        await add(...handedOver(job, made, failure));
        // The inline attempt, counted by what follows it: a retry when attempts are left (with none, the job's
        // failure reports it as the dead letter).
        if (made < attempts) hooks?.onRetry?.(job, made);
      }
      return { status: 'queued' };
    },
    // One round trip: BullMQ counts every state's set in one pipeline.
    counts() {
      return admin.track(
        adminCall(closed, async () => {
          const counts = await queue.getJobCounts(...HELD_STATES, 'failed');
          let depth = 0;
          for (const state of HELD_STATES) depth += counts[state] ?? 0;
          return { depth, deadLetters: counts.failed ?? 0 };
        }),
      );
    },
    deadLetters(query?: DeadLetterQuery): Promise<DeadLetterPage> {
      // Right after the queue is made (a tool reading a deployed queue) the producer may still be connecting.
      const connect = producer === undefined ? undefined : () => usable().then(() => producer);
      return admin.track(adminCall(closed, () => readDeadLetters(queue, connect, query)));
    },
    replay(eventId, { failedAt } = {}) {
      const successKey = successes.keyOf(eventId);
      return admin.track(
        adminCall(
          closed,
          () => usable().then(() => replayLetter(queue, producer, eventId, { failedAt, successKey })),
          lateReplay(eventId),
        ),
      );
    },
    discard(eventId, { failedAt } = {}) {
      const successKey = successes.keyOf(eventId);
      return admin.track(
        adminCall(closed, () =>
          usable().then(() => discardLetter(queue, producer, eventId, { failedAt, successKey })),
        ),
      );
    },
    close({ timeoutMs = 10_000 } = {}) {
      const refused = closeTimeoutProblem(timeoutMs, 'queue close');
      if (refused !== undefined) return Promise.reject(refused);
      closing ??= shutDown(timeoutMs);
      return closing;
    },
  };
}
