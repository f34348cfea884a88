// Inline mode's lease on a real Redis reached through a real loopback hop: a claim whose answer came late is renewed
// before its lease lapses, counted from when the claim was sent.
import { connect, createServer, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createMemoryQueue,
  createReceiver,
  type Receiver,
  silentLogger,
  type WebhookResponse,
} from 'workforce-webhooks';
import { createRedisStore } from 'workforce-webhooks/redis';
import { createSignedDelivery, type SignedDelivery } from 'workforce-webhooks/testing';
import { connectRedis } from '../setup/redis-helpers.js';
import { hasRedisServer, startRedisServer } from '../setup/redis-server.js';

const secret = 'whsec_inline_lease_lapse_test';
const encoder = new TextEncoder();
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const handle = (receiver: Receiver, delivery: SignedDelivery<string>): Promise<WebhookResponse> =>
  receiver.handle({ method: 'POST', headers: delivery.headers, body: encoder.encode(delivery.body) });

// A TCP hop to Redis on loopback, as a network between one instance and Redis: it can hold Redis's answers back
// for a while (a slow link), or drop every byte both ways (a partition of that instance alone).
async function networkTo(port: number) {
  let delayMs = 0;
  let partitioned = false;
  const sockets = new Set<Socket>();
  const server = createServer((near) => {
    const far = connect(port, '127.0.0.1');
    sockets.add(near).add(far);
    // Answers keep their order: each waits for the one before it.
    let answers = Promise.resolve();
    near.on('data', (chunk) => {
      if (!partitioned) far.write(chunk);
    });
    far.on('data', (chunk) => {
      const wait = delayMs;
      answers = answers.then(async () => {
        if (wait > 0) await sleep(wait);
        if (!partitioned) near.write(chunk);
      });
    });
    const cut = (): void => {
      near.destroy();
      far.destroy();
    };
    near.on('error', cut).on('close', cut);
    far.on('error', cut).on('close', cut);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  return {
    url: `redis://127.0.0.1:${(server.address() as { port: number }).port}`,
    delayAnswers(ms: number) {
      delayMs = ms;
    },
    partition() {
      partitioned = true;
    },
  };
}

// An inline receiver on `url`, with its own client and `options`.
async function instance(
  url: string,
  prefix: string,
  options: { leaseMs: number; storeTimeoutMs?: number; ackDeadlineMs?: number },
) {
  const client = connectRedis(url);
  await client.ping();
  const receiver = createReceiver({
    secret,
    mode: 'inline',
    logger: silentLogger,
    ...options,
    store: createRedisStore({ client, prefix, logger: silentLogger }),
    // Retries at once, so the test waits for no backoff.
    queue: createMemoryQueue({ backoff: () => 0 }),
  });
  cleanups.push(() => receiver.close({ timeoutMs: 3000 }));
  return receiver;
}

describe.skipIf(!hasRedisServer())('inline mode: a lease the store cannot keep', () => {
  it('renews a claim whose answer came late before its lease lapses, so no other instance takes the event meanwhile', {
    timeout: 90_000,
  }, async () => {
    const redis = await startRedisServer();
    cleanups.push(() => redis.dispose());
    const network = await networkTo(redis.port);
    const prefix = `late-${crypto.randomUUID().slice(0, 8)}:`;
    const leaseMs = 4000;
    // The claim's answer takes 3.2 s of its 4 s deadline: the lease was written at its start, 3.2 s before the run.
    const slow = await instance(network.url, prefix, { leaseMs, storeTimeoutMs: 4000 });
    const other = await instance(redis.url, prefix, { leaseMs });
    const runs: string[] = [];
    let ended = false;
    let started: () => void = () => {};
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    slow.on('leave.approved', async () => {
      runs.push('slow');
      network.delayAnswers(0);
      started();
      // Longer than the lease: it is renewed meanwhile.
      await sleep(leaseMs + 500);
      ended = true;
    });
    other.on('leave.approved', () => {
      runs.push('other');
    });
    const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
    network.delayAnswers(3200);
    const first = handle(slow, delivery);
    await running;
    // The sender's copies reach the other instance all through the run.
    const statuses: number[] = [];
    while (!ended) {
      statuses.push((await handle(other, delivery)).status);
      await sleep(50);
    }
    expect({
      // Answered once the run ended (200), or by ackDeadlineMs from the claim on a slow machine (202).
      answered: [200, 202].includes((await first).status),
      runs,
      copies: [...new Set(statuses)],
      after: (await handle(other, delivery)).status,
    }).toEqual({ answered: true, runs: ['slow'], copies: [409], after: 200 });
  });
});
