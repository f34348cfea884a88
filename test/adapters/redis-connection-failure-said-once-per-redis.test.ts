import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { createReceiver, type Logger, silentLogger } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createRedisStore } from 'workforce-webhooks/redis';
import { hasRedisServer, startRedisServer } from '../setup/redis-server.js';
import { freePort } from '../support/free-port.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

// A redis-server of the test's own that wants `the-right-one`, stopped after the test.
const passwordRedis = async (): Promise<number> => {
  const server = await startRedisServer(['--requirepass', 'the-right-one']);
  cleanups.push(() => server.dispose());
  return server.port;
};

// Two receivers (two endpoints), each with its store on a client of its own to `url`, one logger; the lines it got
// once every client has failed `times` times.
async function twoStores(url: string, times: number) {
  const lines: string[] = [];
  const logger: Logger = {
    debug() {},
    info() {},
    warn: (_fields, msg) => void lines.push(`warn ${msg}`),
    error: (_fields, msg) => void lines.push(`error ${msg}`),
  };
  const failed = [0, 0];
  const clients = [0, 1].map((i) => {
    const client = new Redis(url, { maxRetriesPerRequest: 1, retryStrategy: () => 20 });
    client.on('error', () => {
      failed[i]! += 1;
    });
    cleanups.push(async () => client.disconnect());
    const receiver = createReceiver({
      secret: 'whsec_said_once_per_redis',
      logger: silentLogger,
      store: createRedisStore({ client, logger, prefix: `endpoint-${i}:` }),
    });
    cleanups.push(() => receiver.close({ timeoutMs: 2000 }));
    return client;
  });
  await expect.poll(() => Math.min(...failed), { timeout: 30_000 }).toBeGreaterThanOrEqual(times);
  return { lines, clients, failed: () => Math.min(...failed) };
}

describe.skipIf(!hasRedisServer())('Redis stores: a connection failure said once per Redis', () => {
  it('says a refused password once for two stores on clients of their own, and again after a ready', {
    timeout: 60_000,
  }, async () => {
    const port = await passwordRedis();
    const { lines, clients, failed } = await twoStores(`redis://:not-the-password@127.0.0.1:${port}`, 5);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/Redis refused the username or password/);

    // The password put right: both log in; then changed again under them, and their connections cut.
    const admin = new Redis(`redis://:the-right-one@127.0.0.1:${port}`, { maxRetriesPerRequest: 1 });
    cleanups.push(async () => admin.disconnect());
    await admin.config('SET', 'requirepass', 'not-the-password');
    await expect
      .poll(() => clients.every((client) => client.status === 'ready'), { timeout: 20_000 })
      .toBe(true);
    await admin.config('SET', 'requirepass', 'yet-another-one');
    await admin.auth('yet-another-one');
    await admin.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
    // Several refused logins of each client later, the refusal said once more.
    const before = failed();
    await expect.poll(failed, { timeout: 20_000 }).toBeGreaterThanOrEqual(before + 5);
    expect(lines.filter((line) => /refused the username or password/.test(line))).toHaveLength(2);
  });

  it('says a refused password once for a store and a BullMQ queue on one Redis, never with the password', {
    timeout: 60_000,
  }, async () => {
    const port = await passwordRedis();
    const url = `redis://:not-the-password@127.0.0.1:${port}`;
    const lines: string[] = [];
    const logged: unknown[] = [];
    const logger: Logger = {
      debug() {},
      info() {},
      warn: (fields, msg) => {
        lines.push(`warn ${msg}`);
        logged.push(fields);
      },
      error: (fields, msg) => {
        lines.push(`error ${msg}`);
        logged.push(fields);
      },
    };
    let failures = 0;
    const client = new Redis(url, { maxRetriesPerRequest: 1, retryStrategy: () => 20 });
    client.on('error', () => {
      failures += 1;
    });
    cleanups.push(async () => client.disconnect());
    const receiver = createReceiver({
      secret: 'whsec_said_once_per_redis',
      logger,
      store: createRedisStore({ client, logger }),
      queue: createBullmqQueue({ connection: url }),
    });
    cleanups.push(() => receiver.close({ timeoutMs: 2000 }));
    await expect.poll(() => failures, { timeout: 30_000 }).toBeGreaterThanOrEqual(10);
    const refused = lines.filter((line) => /refused the username or password/.test(line));
    expect(refused).toHaveLength(1);
    expect(JSON.stringify(logged)).not.toContain('not-the-password');
  });

  it('says once that nothing accepts connections at the address, for two stores on clients of their own', {
    timeout: 60_000,
  }, async () => {
    const { lines } = await twoStores(`redis://127.0.0.1:${await freePort()}`, 5);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/nothing accepts connections at the Redis address/);
  });
});
