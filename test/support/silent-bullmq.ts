// Instances of an app on one BullMQ queue, on a redis-server of the test's own that can be made silent (SIGSTOP):
// what the tests of a Redis going silent as jobs finish share.
import { Queue } from 'bullmq';
import { expect } from 'vitest';
import { createMemoryStore, createReceiver, type DeadLetter, type Receiver } from 'workforce-webhooks';
import { type BullmqQueueOptions, createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createSignedDelivery, type SignedDelivery } from 'workforce-webhooks/testing';
import { connectRedis, uniqueName } from '../setup/redis-helpers.js';
import { type RedisServer, startRedisServer } from '../setup/redis-server.js';
import { type LogLine, recordingLogger } from './logger.js';

/** The queue's options a test sets: its locks and stalled checks. */
export type SilentQueueOptions = Omit<BullmqQueueOptions, 'connection' | 'name'>;

/** A BullMQ queue on a redis-server of the test's own, and the app's instances on it. */
export interface SilentQueue {
  readonly redis: RedisServer;
  /** One more instance of the app: a receiver (memory store, a recording logger) on the queue, closed at the end. */
  instance(onDeadLetter?: (letter: DeadLetter) => unknown): { receiver: Receiver; lines: LogLine[] };
  /** Signs a leave.approved and has `receiver` accept it (202). */
  accept(receiver: Receiver): Promise<SignedDelivery<'leave.approved'>>;
  /** Waits until the job of event `id` is `state` in Redis. */
  reaches(id: string, state: 'completed' | 'failed'): Promise<void>;
}

/** Cleanups a test file runs after each test, newest first. */
export type Cleanups = (() => Promise<void>)[];

/**
 * Starts a redis-server for the test and a queue on it; everything is closed by `cleanups`.
 * @example
 * const queue = await silentQueue(secret, { lockDurationMs: 2000, lockRenewMs: 300 }, cleanups);
 */
export async function silentQueue(
  secret: string,
  options: SilentQueueOptions,
  cleanups: Cleanups,
): Promise<SilentQueue> {
  const redis = await startRedisServer();
  cleanups.push(() => redis.dispose());
  const name = uniqueName('silent');
  let jobs: Queue | undefined;
  return {
    redis,
    instance(onDeadLetter) {
      const logger = recordingLogger();
      const receiver = createReceiver({
        secret,
        store: createMemoryStore(),
        queue: createBullmqQueue({ connection: connectRedis(redis.url), name, ...options }),
        logger,
        ...(onDeadLetter === undefined ? {} : { onDeadLetter }),
      });
      cleanups.push(() => receiver.close({ timeoutMs: 2000 }));
      return { receiver, lines: logger.lines };
    },
    async accept(receiver) {
      const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
      const body = new TextEncoder().encode(delivery.body);
      expect((await receiver.handle({ method: 'POST', headers: delivery.headers, body })).status).toBe(202);
      return delivery;
    },
    async reaches(id, state) {
      if (jobs === undefined) {
        const opened = new Queue(name, { connection: connectRedis(redis.url) });
        cleanups.push(() => opened.close());
        jobs = opened;
      }
      const reading = jobs;
      await expect.poll(() => reading.getJobState(id), { timeout: 20_000, interval: 200 }).toBe(state);
    },
  };
}

/** Handlers that count every run of an event, the first of which waits until released. */
export interface HeldRuns {
  /** The first instance's handler: it counts, says it started, and returns once released. */
  readonly held: () => Promise<void>;
  /** Every other instance's handler: it counts. */
  readonly counted: () => void;
  readonly started: Promise<void>;
  release(): void;
  runs(): number;
}

/**
 * Handlers whose first run is held until the test releases it.
 * @example
 * const runs = heldRuns(); a.receiver.on('leave.approved', runs.held); await runs.started; runs.release();
 */
export function heldRuns(): HeldRuns {
  let count = 0;
  let start!: () => void;
  const started = new Promise<void>((resolve) => {
    start = resolve;
  });
  let release!: () => void;
  const finish = new Promise<void>((resolve) => {
    release = resolve;
  });
  return {
    held: async () => {
      count++;
      start();
      await finish;
    },
    counted: () => {
      count++;
    },
    started,
    release,
    runs: () => count,
  };
}

/** What a worker logs when it finds that a job it took over had succeeded before Redis stalled. */
export const NOT_RUN_AGAIN = 'workforce-webhooks: this event succeeded before Redis stalled; not run again';
