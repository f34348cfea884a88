// The BullMQ queue on a connection Redis refuses in the first hour (a wrong password): each refused delivery's log
// says why with the fix, not only that Redis is reconnecting, and events are taken once the password matches.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryStore, createReceiver, type Logger } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { hasRedisServer, launchRedisServer } from '../setup/redis-server.js';
import { onFreePort } from '../support/free-port.js';

const secret = 'whsec_bullmq_first_hour';
const encoder = new TextEncoder();
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe.skipIf(!hasRedisServer())('createBullmqQueue on a connection with a wrong password', () => {
  it('says with each refused delivery that Redis refused the password, with the fix, and runs events once it matches', {
    timeout: 90_000,
  }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'wfwh-bullmq-connect-'));
    const { port, child } = await onFreePort(async (port) => ({
      port,
      child: await launchRedisServer(port, dir, ['--requirepass', 'the-right-one']),
    }));
    cleanups.push(async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
      await rm(dir, { recursive: true, force: true });
    });
    const refusals: string[] = [];
    const logger: Logger = {
      debug() {},
      info() {},
      warn() {},
      error: (fields: object, msg?: string) => {
        const { err } = fields as { err?: unknown };
        if (msg?.includes('the queue refused the event')) refusals.push(String((err as Error)?.message));
      },
    };
    const runs: string[] = [];
    const receiver = createReceiver({
      secret,
      store: createMemoryStore(),
      queue: createBullmqQueue({
        connection: `redis://:not-the-password@127.0.0.1:${port}`,
        name: 'first-hour',
      }),
      logger,
    }).on('leave.approved', (event) => void runs.push(event.id));
    cleanups.push(() => receiver.close({ timeoutMs: 2000 }));
    const deliver = async (id: string) => {
      const delivery = await createSignedDelivery({ secret, type: 'leave.approved', id });
      return receiver.handle({
        method: 'POST',
        headers: delivery.headers,
        body: encoder.encode(delivery.body),
      });
    };

    for (let i = 0; i < 4; i++) {
      const answer = await deliver(crypto.randomUUID());
      expect(answer.status).toBe(503);
      expect(JSON.parse(answer.body)).toEqual({ error: 'queue_unavailable' });
    }
    expect(refusals).toHaveLength(4);
    for (const refusal of refusals) {
      expect(refusal).toMatch(/Redis refused the username or password/);
      expect(refusal).toMatch(/check the password \(and username\) in the Redis URL/);
      expect(refusal).not.toMatch(/not-the-password|the-right-one/);
    }

    // The server's password put right while the app runs: the queue's connections log in by themselves.
    const admin = new Redis(`redis://:the-right-one@127.0.0.1:${port}`, { maxRetriesPerRequest: 1 });
    cleanups.push(async () => admin.disconnect());
    await admin.config('SET', 'requirepass', 'not-the-password');
    const id = crypto.randomUUID();
    await expect.poll(async () => (await deliver(id)).status, { timeout: 30_000, interval: 250 }).toBe(202);
    await expect.poll(() => runs, { timeout: 30_000 }).toEqual([id]);
  });
});
