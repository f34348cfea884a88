// The BullMQ queue on a Redis flushed while its connections stay up and no job runs: the events waiting in it are
// lost, and that is said loudly (once), not only at the next reconnect.
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryStore, createReceiver, type Logger, type Receiver } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { hasRedisServer, startRedisServer } from '../setup/redis-server.js';

const secret = 'whsec_bullmq_flushed';
const encoder = new TextEncoder();
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function deliver(receiver: Receiver, id: string = crypto.randomUUID()) {
  const delivery = await createSignedDelivery({ secret, type: 'leave.approved', id });
  return receiver.handle({ method: 'POST', headers: delivery.headers, body: encoder.encode(delivery.body) });
}

function recordingLogger(): { lines: { level: string; message: string }[]; logger: Logger } {
  const lines: { level: string; message: string }[] = [];
  const at = (level: string) => (_fields: object, message: string) => void lines.push({ level, message });
  return { lines, logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') } };
}

describe.skipIf(!hasRedisServer())('createBullmqQueue on a Redis flushed under it', () => {
  it('logs at error level, once, that the events waiting in it were lost, and serves again', {
    timeout: 60_000,
  }, async () => {
    const server = await startRedisServer();
    cleanups.push(() => server.dispose());
    const admin = new Redis(server.url, { maxRetriesPerRequest: 1 });
    admin.on('error', () => {});
    cleanups.push(async () => admin.disconnect());
    const { lines, logger } = recordingLogger();
    const emptied = () =>
      lines.filter((line) => line.level === 'error' && /came back empty/.test(line.message));
    const runs: string[] = [];
    const name = 'flushed';
    const receiver = createReceiver({
      secret,
      logger,
      store: createMemoryStore(),
      queue: createBullmqQueue({ connection: server.url, name, stalledIntervalMs: 1000 }),
    }).on('leave.approved', (event) => void runs.push(event.id));
    cleanups.push(() => receiver.close({ timeoutMs: 2000 }));

    const first = crypto.randomUUID();
    expect((await deliver(receiver, first)).status).toBe(202);
    await expect.poll(() => runs, { timeout: 10_000 }).toEqual([first]);
    // Normal running says nothing of the kind.
    await sleep(2500);
    expect(emptied()).toEqual([]);

    // FLUSHALL (or FLUSHDB) with every connection up: no reconnect tells of it.
    await admin.flushall();

    await expect.poll(() => emptied().length, { timeout: 15_000 }).toBe(1);
    const after = crypto.randomUUID();
    expect((await deliver(receiver, after)).status).toBe(202);
    await expect.poll(() => runs, { timeout: 10_000 }).toEqual([first, after]);
    await sleep(2500);
    expect(emptied()).toHaveLength(1);
  });
});
