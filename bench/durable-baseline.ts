// The hand-written durable receiver: the least that gives the package's guarantee with Redis and BullMQ.
import { randomUUID } from 'node:crypto';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { SECRET } from './fixtures.js';
import { floorVerifyAndParse } from './floor.js';

/** Options of `durableBaseline`. */
export interface DurableBaselineOptions {
  readonly url: string;
  /** The BullMQ queue name (also the prefix of the dedupe keys). */
  readonly name: string;
  /** Jobs the worker runs at once, as the package's default. */
  readonly concurrency?: number;
  /** Called after each event is processed and marked done. */
  readonly onProcessed?: () => void;
}

/** A running hand-written receiver: `accept` answers one delivery, a worker in the same process runs the jobs. */
export interface DurableBaseline {
  /** The status to answer: 202 once the claim and the job are stored, 200 for a duplicate, 400 or 503. */
  accept(body: Buffer, signature: string | undefined): Promise<number>;
  close(): Promise<void>;
}

const LEASE_MS = 30_000;
const DONE_TTL_MS = 72 * 3600_000;

/**
 * Verify and parse, `SET key token NX PX`, `queue.add` with `jobId` = event id, answer 202; a BullMQ `Worker` of
 * the same concurrency runs a no-op and then marks the id done for 72 h (`SET key done PX`).
 * @example
 * const baseline = durableBaseline({ url, name: 'bench' }); const status = await baseline.accept(body, header);
 */
export function durableBaseline({
  url,
  name,
  concurrency = 10,
  onProcessed = () => {},
}: DurableBaselineOptions): DurableBaseline {
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  // Attempts and backoff as the package's defaults, so a failed handler gets the same retries; the done mark,
  // not the finished job, is what answers a redelivery, so the job goes once it completes.
  const queue = new Queue(name, {
    connection: client,
    defaultJobOptions: { attempts: 5, backoff: { type: 'exponential', delay: 1000 }, removeOnComplete: true },
  });
  const workerClient = new Redis(url, { maxRetriesPerRequest: null });
  const worker = new Worker(
    name,
    async (job) => {
      await client.set(`${name}:dedupe:${job.id}`, 'done', 'PX', DONE_TTL_MS);
      onProcessed();
    },
    { connection: workerClient, concurrency },
  );
  worker.on('error', () => {}); // a closed connection at shutdown
  return {
    async accept(body, signature) {
      const event = floorVerifyAndParse(body, signature, SECRET) as { id?: unknown } | undefined;
      if (event === undefined || typeof event.id !== 'string') return 400;
      const key = `${name}:dedupe:${event.id}`;
      const token = randomUUID();
      try {
        if ((await client.set(key, token, 'PX', LEASE_MS, 'NX')) === null) return 200;
      } catch {
        return 503;
      }
      try {
        await queue.add('event', event, { jobId: event.id });
        return 202;
      } catch {
        // Give the claim back so the sender's retry can take it (a compare-and-delete would be stricter).
        await client.del(key).catch(() => {});
        return 503;
      }
    },
    async close() {
      await worker.close();
      await queue.close();
      client.disconnect();
      workerClient.disconnect();
    },
  };
}
