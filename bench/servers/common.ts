// What every benchmark server shares: the package's receiver as users set it up, and the ready signal.
import type { AddressInfo } from 'node:net';
import { createReceiver, type DedupeStore, type Receiver } from 'workforce-webhooks';
import { EVENT_TYPE, SECRET } from '../fixtures.js';

/** The path every benchmark server answers on. */
export const PATH = '/webhooks';

/** The answer the hand-written endpoints give, as the package does (spec: any 2xx is a success). */
export const ACCEPTED = '{"received":true}';

async function storeFromEnv(): Promise<DedupeStore | undefined> {
  const url = process.env.BENCH_REDIS_URL;
  if (url === undefined || url === '') return undefined;
  const [{ Redis }, { createRedisStore }] = await Promise.all([
    import('ioredis'),
    import('workforce-webhooks/redis'),
  ]);
  return createRedisStore({ client: new Redis(url) });
}

/**
 * The receiver a user writes: queue mode, one handler for the event type. BENCH_HANDLER_MS makes the
 * handler sleep; BENCH_REDIS_URL swaps the memory store for the Redis one.
 * @example
 * const receiver = await benchReceiver();
 */
export async function benchReceiver(): Promise<Receiver> {
  const delay = Number(process.env.BENCH_HANDLER_MS ?? 0);
  const store = await storeFromEnv();
  const receiver = createReceiver({ secret: SECRET, ...(store === undefined ? {} : { store }) });
  receiver.on(EVENT_TYPE, delay > 0 ? () => new Promise((r) => setTimeout(r, delay)) : () => {});
  return receiver;
}

/**
 * Tells the parent process the server listens (the parent reads `listening <port>` on stdout).
 * @example
 * server.listen(0, () => ready(server.address()));
 */
export function ready(address: AddressInfo | string | null): void {
  if (address === null || typeof address === 'string') throw new Error('bench: no TCP address');
  // Exit cleanly on SIGTERM, so that `--cpu-prof` writes its profile.
  process.once('SIGTERM', () => process.exit(0));
  process.stdout.write(`listening ${address.port}\n`);
}

/**
 * Whether this server runs the package or the hand-written baseline (first argument).
 * @example
 * if (variant() === 'baseline') ...
 */
export function variant(): 'package' | 'baseline' {
  return process.argv[2] === 'baseline' ? 'baseline' : 'package';
}
