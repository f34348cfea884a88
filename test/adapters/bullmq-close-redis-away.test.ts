// An instance closed with a job running while its way to Redis is cut (connections refused, Redis itself fine): the
// close ends within its deadline, and the job, kept in Redis, runs again on another instance.
import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryStore, createReceiver, type Receiver, silentLogger } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';

const secret = 'whsec_bullmq_close_redis_away';
const encoder = new TextEncoder();
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function deliver(receiver: Receiver, id: string) {
  const delivery = await createSignedDelivery({ secret, type: 'leave.approved', id });
  return receiver.handle({ method: 'POST', headers: delivery.headers, body: encoder.encode(delivery.body) });
}

// A way to Redis that can be cut: open connections dropped and new ones refused, as when the network fails.
async function cuttableWay(target: URL): Promise<{ url: string; cut: () => void }> {
  const sockets = new Set<Socket>();
  let open = true;
  const server: Server = createServer((client) => {
    if (!open) {
      client.destroy();
      return;
    }
    const upstream = connect(Number(target.port), target.hostname);
    sockets.add(client).add(upstream);
    client.pipe(upstream).pipe(client);
    const close = (): void => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const { port } = server.address() as { port: number };
  return {
    url: `redis://127.0.0.1:${port}`,
    cut: () => {
      open = false;
      for (const socket of sockets) socket.destroy();
    },
  };
}

describe.skipIf(!redisUrl)('an instance closed with a job running while Redis is out of reach', () => {
  it('ends its close within the deadline, and another instance runs the job it held', {
    timeout: 90_000,
  }, async () => {
    const name = uniqueName('close-away');
    const way = await cuttableWay(new URL(redisUrl));
    const started: string[] = [];
    const finished: string[] = [];
    const options = { name, lockDurationMs: 2000, stalledIntervalMs: 500 };
    const make = (label: string, url: string): Receiver =>
      createReceiver({
        secret,
        store: createMemoryStore(),
        queue: createBullmqQueue({ connection: connectRedis(url), ...options }),
        logger: silentLogger,
      }).on('leave.approved', async (_event, ctx) => {
        started.push(label);
        if (label === 'a')
          await new Promise((_resolve, reject) =>
            ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)),
          );
        finished.push(label);
      });
    const a = make('a', way.url);
    cleanups.push(() => a.close({ timeoutMs: 2000 }));
    const id = crypto.randomUUID();
    expect((await deliver(a, id)).status).toBe(202);
    await expect.poll(() => started, { timeout: 20_000 }).toEqual(['a']);

    way.cut();
    const closing = a.close({ timeoutMs: 2000 });
    const outcome = await Promise.race([
      closing.then(() => 'closed'),
      new Promise((resolve) => setTimeout(resolve, 15_000, 'hung')),
    ]);
    expect(outcome).toBe('closed');

    // The job stayed in Redis, held by a lock that lapses: another instance takes it over and runs it to the end.
    const b = make('b', redisUrl);
    cleanups.push(() => b.close({ timeoutMs: 2000 }));
    const redis = connectRedis();
    await expect.poll(() => redis.zscore(`bull:${name}:completed`, id), { timeout: 30_000 }).not.toBeNull();
    expect(started).toEqual(['a', 'b']);
    expect(finished).toEqual(['b']);
    expect((await b.deadLetters()).items).toEqual([]);
  });
});
