// The durable path on node:http: the package with the Redis store and the BullMQ queue, the hand-written receiver
// doing the least with the same guarantee, or a bare BullMQ worker (the drain's floor). It counts the events it
// has processed and answers `{ until: n }` over IPC once that count reaches n.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { createReceiver } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createNodeHandler } from 'workforce-webhooks/node';
import { createRedisStore } from 'workforce-webhooks/redis';
import { durableBaseline } from '../durable-baseline.js';
import { EVENT_TYPE, SECRET } from '../fixtures.js';
import { ACCEPTED, ready } from './common.js';

const url = process.env.BENCH_REDIS_URL ?? '';
const name = process.env.BENCH_QUEUE ?? 'workforce-webhooks';
const handlerMs = Number(process.env.BENCH_HANDLER_MS ?? 0);
const kind = process.argv[2] ?? 'package';
if (url === '') throw new Error('bench: BENCH_REDIS_URL is required');

let processed = 0;
const waiting: { until: number; resolve: () => void }[] = [];
const onProcessed = (): void => {
  processed++;
  for (let i = waiting.length - 1; i >= 0; i--) {
    if (processed >= waiting[i]!.until) waiting.splice(i, 1)[0]!.resolve();
  }
};
process.on('message', (message: { until: number }) => {
  const answer = (): void => void process.send?.({ processed });
  if (processed >= message.until) answer();
  else waiting.push({ until: message.until, resolve: answer });
});

function packageHandler(): (req: IncomingMessage, res: ServerResponse) => void {
  // As the README sets it up: the store's client fails fast, the queue opens its own connections from it.
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  const receiver = createReceiver({
    secret: SECRET,
    store: createRedisStore({ client }),
    queue: createBullmqQueue({ connection: client, name }),
  });
  receiver.on(EVENT_TYPE, handlerMs > 0 ? () => sleep(handlerMs).then(onProcessed) : () => onProcessed());
  return createNodeHandler(receiver);
}

function baselineHandler(): (req: IncomingMessage, res: ServerResponse) => void {
  const baseline = durableBaseline({ url, name, onProcessed });
  return (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      const header = req.headers['svc-signature'];
      void baseline.accept(body, typeof header === 'string' ? header : undefined).then((status) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(status < 300 ? ACCEPTED : '{"error":"refused"}');
      });
    });
  };
}

// The drain's floor: BullMQ's own worker with a no-op processor, nothing else. `bare-signal` takes BullMQ's
// third argument, as the package's processor does: BullMQ then makes an AbortController for every job.
function bareWorker(): (req: IncomingMessage, res: ServerResponse) => void {
  const processor =
    kind === 'bare-signal'
      ? async (_job: unknown, _token?: string, signal?: AbortSignal) => {
          if (signal?.aborted !== true) onProcessed();
        }
      : async () => onProcessed();
  const worker = new Worker(name, processor, {
    connection: new Redis(url, { maxRetriesPerRequest: null }),
    concurrency: 10,
  });
  worker.on('error', () => {});
  return (_req, res) => res.writeHead(404).end();
}

const handler =
  kind === 'baseline' ? baselineHandler() : kind.startsWith('bare') ? bareWorker() : packageHandler();
const server = createServer(handler);
// The durable section's blocks take seconds: a connection may wait longer than node's 5 s keep-alive between two.
server.keepAliveTimeout = 600_000;
server.listen(0, '127.0.0.1', () => ready(server.address()));
