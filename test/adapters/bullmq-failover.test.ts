// The BullMQ queue through a failover behind one address (a DNS name or a proxy moved to the promoted replica): the
// old primary, now a read-only replica, answers READONLY on the connections still open to it; the queue's connections
// go to the new primary instead of refusing every event until a restart.
import { connect, createServer, type Server, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryStore, createReceiver, type Receiver, silentLogger } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { hasRedisServer, type RedisServer, startRedisServer } from '../setup/redis-server.js';

const secret = 'whsec_bullmq_failover';
const encoder = new TextEncoder();
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function deliver(receiver: Receiver, id: string = crypto.randomUUID()) {
  const delivery = await createSignedDelivery({ secret, type: 'leave.approved', id });
  return receiver.handle({ method: 'POST', headers: delivery.headers, body: encoder.encode(delivery.body) });
}

// One address in front of the primary, as a managed Redis's endpoint is: new connections go to `target`, open ones
// stay where they were.
async function endpoint(initial: number): Promise<{ url: string; target: (port: number) => void }> {
  let port = initial;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(port, '127.0.0.1');
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
  const { port: listening } = server.address() as { port: number };
  return {
    url: `redis://127.0.0.1:${listening}`,
    target: (next) => {
      port = next;
    },
  };
}

const admin = (server: RedisServer): Redis => {
  const client = new Redis(server.url, { maxRetriesPerRequest: 1 });
  client.on('error', () => {});
  cleanups.push(async () => client.disconnect());
  return client;
};

describe.skipIf(!hasRedisServer())('createBullmqQueue through a failover behind one address', () => {
  it('accepts and runs events again once the endpoint points at the new primary', {
    timeout: 60_000,
  }, async () => {
    const [first, second] = [await startRedisServer(), await startRedisServer()];
    cleanups.push(
      () => first.dispose(),
      () => second.dispose(),
    );
    const [one, two] = [admin(first), admin(second)];
    const front = await endpoint(first.port);
    const runs: string[] = [];
    const receiver = createReceiver({
      secret,
      store: createMemoryStore(),
      queue: createBullmqQueue({ connection: front.url, name: 'failover' }),
      logger: silentLogger,
    }).on('leave.approved', (event) => void runs.push(event.id));
    cleanups.push(() => receiver.close({ timeoutMs: 2000 }));
    const before = crypto.randomUUID();
    expect((await deliver(receiver, before)).status).toBe(202);
    await expect.poll(() => runs, { timeout: 10_000 }).toEqual([before]);

    // The replica takes the data, is promoted, the old primary follows it, and the endpoint moves.
    await two.replicaof('127.0.0.1', first.port);
    await expect
      .poll(async () => /master_link_status:up/.test(await two.info('replication')), { timeout: 15_000 })
      .toBe(true);
    await two.replicaof('NO', 'ONE');
    await one.replicaof('127.0.0.1', second.port);
    front.target(second.port);
    await sleep(200);

    // The sender retries a 503: the event must be taken once the queue is on the new primary, and run.
    const after = crypto.randomUUID();
    await expect
      .poll(async () => (await deliver(receiver, after)).status, { timeout: 15_000, interval: 250 })
      .toBe(202);
    await expect.poll(() => runs, { timeout: 15_000 }).toEqual([before, after]);
  });
});
