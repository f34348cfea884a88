// The BullMQ queue: an accepted event is a Redis job before the 202, run by workers on any instance, kept through crashes.
import { type Job, Queue, Worker } from 'bullmq';
import { Redis, type RedisOptions } from 'ioredis';
import { startAttempt } from '../src/attempt.js';
import { ConfigurationError, WebhookError } from '../src/errors.js';
import {
  type Backoff,
  type DeadLetter,
  type EventQueue,
  exponentialBackoff,
  HandlerFailure,
  type QueuedEvent,
  type QueueHooks,
} from '../src/queue.js';
import { DEFAULT_DONE_TTL_MS } from '../src/store.js';

/** Options of `createBullmqQueue`. */
export interface BullmqQueueOptions {
  /** Your ioredis client (never closed; the queue opens its own connections from it), its options, or a URL. */
  readonly connection: Redis | RedisOptions | string;
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
  /** A running job's lock; a dead instance's jobs are taken over once it lapses. Default 30 000. */
  readonly lockDurationMs?: number;
  /** How often workers look for jobs whose lock lapsed. Default 30 000. */
  readonly stalledIntervalMs?: number;
  /** Times a job may be taken over from a dead worker before it fails. Default 1 (BullMQ's). */
  readonly maxStalledCount?: number;
}

const JOB_NAME = 'event';
const BACKOFF_TYPE = 'workforce-webhooks';
const SHUTDOWN = 'the receiver closed during this attempt';
type EventJob = Job<QueuedEvent>;

// True when `ms` pass before `promise` settles.
async function outlasts(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = await Promise.race([
    promise.then(() => false),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(resolve, ms, true);
    }),
  ]);
  clearTimeout(timer);
  return late;
}

/**
 * The durable queue for several instances: `enqueue` resolves once the job (id = event id) is stored in Redis,
 * workers on every instance run it, a dead instance's jobs are taken over, exhausted jobs are the dead letters.
 * Redis must run with `maxmemory-policy noeviction`.
 * @example
 * createReceiver({ secret, store: createRedisStore({ client }), queue: createBullmqQueue({ connection: client }) });
 */
export function createBullmqQueue({
  connection,
  name = 'workforce-webhooks',
  prefix,
  concurrency = 10,
  attempts = 5,
  backoff = exponentialBackoff(),
  handlerTimeoutMs = 30_000,
  keepCompletedMs = DEFAULT_DONE_TTL_MS,
  lockDurationMs = 30_000,
  stalledIntervalMs = 30_000,
  maxStalledCount = 1,
}: BullmqQueueOptions): EventQueue {
  if (connection === undefined || connection === null)
    throw new ConfigurationError(
      'createBullmqQueue needs `connection`: an ioredis client, its options or a URL',
    );
  for (const [key, value] of Object.entries({ concurrency, attempts, handlerTimeoutMs, lockDurationMs })) {
    if (!Number.isInteger(value) || value < 1)
      throw new ConfigurationError(`queue ${key} must be a positive integer`);
  }
  const open = (overrides: RedisOptions): Redis => {
    const client =
      typeof connection === 'string'
        ? new Redis(connection, overrides)
        : typeof (connection as Redis).duplicate === 'function' // an ioredis client, of any copy of ioredis
          ? (connection as Redis).duplicate(overrides)
          : new Redis({ ...(connection as RedisOptions), ...overrides });
    // BullMQ reports connection errors through the queue's and worker's 'error' events (logged below).
    client.on('error', () => {});
    return client;
  };
  // The producer fails at once while Redis is away, so the delivery is answered 503 (never 202 without a job).
  const producer = open({ enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  const queue = new Queue<QueuedEvent>(name, {
    connection: producer,
    ...(prefix === undefined ? {} : { prefix }),
    defaultJobOptions: {
      backoff: { type: BACKOFF_TYPE },
      removeOnComplete: { age: Math.ceil(keepCompletedMs / 1000) },
      removeOnFail: false,
    },
  });
  let worker: Worker<QueuedEvent> | undefined;
  let workerClient: Redis | undefined;
  let hooks: QueueHooks | undefined;
  let closed = false;
  let closing: Promise<void> | undefined;

  // Waits up to `timeoutMs` for running attempts, then aborts them. With Redis unreachable BullMQ's graceful close
  // would wait for it, so it is forced: running jobs stay stored and another instance takes them over later.
  const shutDown = async (timeoutMs: number): Promise<void> => {
    closed = true;
    const reachable = workerClient?.status === 'ready';
    if (!reachable) worker?.cancelAllJobs(SHUTDOWN);
    const settled = Promise.allSettled([worker?.close(!reachable), queue.close()]);
    if (await outlasts(settled, timeoutMs)) {
      worker?.cancelAllJobs(SHUTDOWN);
      await outlasts(settled, timeoutMs);
    }
    await Promise.all(
      [producer, workerClient].map((client) =>
        client?.status === 'ready' ? client.quit().catch(() => client.disconnect()) : client?.disconnect(),
      ),
    );
  };

  const usable = (): Promise<void> => {
    if (producer.status === 'ready') return Promise.resolve();
    if (!['wait', 'connecting', 'connect'].includes(producer.status))
      return Promise.reject(new WebhookError('queue_unavailable', `Redis is ${producer.status}`));
    // Connecting (at start, or a reconnect attempt): its outcome decides, without a timer of ours.
    return new Promise((resolve, reject) => {
      const done = (error?: Error): void => {
        producer.off('ready', done).off('error', done).off('end', done);
        if (error === undefined && producer.status === 'ready') resolve();
        else reject(new WebhookError('queue_unavailable', 'Redis is unreachable', { cause: error }));
      };
      producer.once('ready', done).once('error', done).once('end', done);
      if (producer.status === 'wait') producer.connect().catch(() => {});
    });
  };

  const letterOf = (job: EventJob, error: unknown): DeadLetter => ({
    event: job.data.event,
    deliveryId: job.data.deliveryId,
    attempts: (job.data.attemptsMade ?? 0) + job.attemptsMade,
    error,
    failedAt: job.finishedOn ?? Date.now(),
  });

  const processor = async (job: EventJob, _token?: string, lost?: AbortSignal): Promise<void> => {
    const { data } = job;
    const attempt = startAttempt(hooks!.process, data, {
      attempt: (data.attemptsMade ?? 0) + job.attemptsMade + 1,
      timeoutMs: handlerTimeoutMs,
    });
    // BullMQ cancels with a string reason (shutdown, lost lock): handlers get an Error.
    const abort = (): void => attempt.abort(new WebhookError('shutting_down', String(lost?.reason)));
    lost?.addEventListener('abort', abort, { once: true });
    try {
      await attempt.done;
    } catch (error) {
      // Kept on the job before BullMQ records the failure, so the next attempt (any instance) skips them.
      if (error instanceof HandlerFailure && error.completed.length > (data.completed?.length ?? 0))
        await job.updateData({ ...data, completed: error.completed });
      throw error;
    } finally {
      lost?.removeEventListener('abort', abort);
    }
  };

  return {
    start(given) {
      if (hooks !== undefined)
        throw new ConfigurationError('a queue serves one receiver; create one per receiver');
      hooks = given;
      const { logger } = given;
      // BullMQ's blocking fetch must wait through reconnects: maxRetriesPerRequest null, on a connection of its own.
      workerClient = open({ maxRetriesPerRequest: null });
      worker = new Worker<QueuedEvent>(name, processor, {
        connection: workerClient,
        ...(prefix === undefined ? {} : { prefix }),
        concurrency,
        lockDuration: lockDurationMs,
        stalledInterval: stalledIntervalMs,
        maxStalledCount,
        settings: {
          backoffStrategy: (made: number, _type?: string, _error?: Error, job?: { data: QueuedEvent }) =>
            Math.max(0, Math.round(backoff(made + (job?.data.attemptsMade ?? 0)))),
        },
      });
      worker.on('failed', (job, error) => {
        if (
          job === undefined ||
          (job.attemptsMade < (job.opts.attempts ?? 1) && error.name !== 'UnrecoverableError')
        )
          return;
        void given.onDeadLetter(letterOf(job, error));
      });
      // The lock lapsed (and another worker may take the job): stop this attempt's handlers.
      worker.on('lockRenewalFailed', (ids) => {
        for (const id of ids) worker?.cancelJob(id, 'the job lock was lost');
      });
      const warn = (error: Error): void =>
        logger.warn({ err: error, queue: name }, 'workforce-webhooks: BullMQ error');
      worker.on('error', warn);
      queue.on('error', warn);
    },
    async enqueue(job) {
      if (closed) throw new WebhookError('shutting_down', 'the queue is closed');
      if (hooks === undefined) throw new ConfigurationError('the queue was not started by a receiver');
      await usable();
      // Job id = event id (a uuid, so never BullMQ's forbidden `0` or `:`): a second add of one event is a no-op.
      await queue.add(JOB_NAME, job, {
        jobId: job.event.id,
        attempts: Math.max(1, attempts - (job.attemptsMade ?? 0)),
      });
      return { status: 'queued' };
    },
    async deadLetters() {
      const failed = (await queue.getFailed(0, -1)) as EventJob[];
      return failed.map((job) => letterOf(job, new Error(job.failedReason)));
    },
    async replay(eventId) {
      const job = (await queue.getJob(eventId)) as EventJob | undefined;
      if (job === undefined || !(await job.isFailed())) return false;
      await job.updateData({ event: job.data.event, deliveryId: job.data.deliveryId });
      await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
      return true;
    },
    close({ timeoutMs = 10_000 } = {}) {
      closing ??= shutDown(timeoutMs);
      return closing;
    },
  };
}
