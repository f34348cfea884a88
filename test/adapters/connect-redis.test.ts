// The Redis store on a client set up wrong in the first hour (password, port, TLS): each told once with the fix,
// deliveries answered 503 meanwhile, and served again once the setup is right, with no restart.
import { type ChildProcess, execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { createReceiver, type Logger, silentLogger } from 'workforce-webhooks';
import { createRedisStore } from 'workforce-webhooks/redis';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { hasRedisServer, launchRedisServer } from '../setup/redis-server.js';
import { freePort, onFreePort } from '../support/free-port.js';

const run = promisify(execFile);
const OPENSSL = '/usr/bin/openssl';
const secret = 'whsec_redis_first_hour';
const encoder = new TextEncoder();
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

// A redis-server of the test's own on a free port, with `extra` arguments, stopped after the test.
const ownRedis = async (extra: readonly string[] = []): Promise<number> => {
  const dir = await mkdtemp(join(tmpdir(), 'wfwh-redis-connect-'));
  const { port, child } = await onFreePort(async (port) => ({
    port,
    child: await launchRedisServer(port, dir, extra),
  }));
  cleanups.push(() => dispose(child, dir));
  return port;
};

// Kills a redis-server of the test's (unless it already exited) and removes its directory.
const dispose = async (child: ChildProcess, dir: string): Promise<void> => {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }
  await rm(dir, { recursive: true, force: true });
};

// The store's error lines, and a receiver on it whose deliveries the test sends.
const setUp = (client: Redis) => {
  const lines: string[] = [];
  const logger: Logger = {
    debug() {},
    info() {},
    warn: (_fields, msg) => void lines.push(`warn ${msg}`),
    error: (_fields, msg) => void lines.push(`error ${msg}`),
  };
  // The client's own errors, counted: the test waits for several reconnects rather than for time to pass.
  let errors = 0;
  client.on('error', () => {
    errors += 1;
  });
  cleanups.push(async () => client.disconnect());
  // What the receiver logs of each delivery it answers 503.
  const answered: string[] = [];
  const receiver = createReceiver({
    secret,
    store: createRedisStore({ client, logger }),
    logger: { ...silentLogger, error: (_fields, msg) => void answered.push(String(msg)) },
    mode: 'inline',
  });
  let runs = 0;
  receiver.on('leave.approved', () => {
    runs += 1;
  });
  cleanups.push(() => receiver.close({ timeoutMs: 2000 }));
  const deliver = async () => {
    const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
    return receiver.handle({
      method: 'POST',
      headers: delivery.headers,
      body: encoder.encode(delivery.body),
    });
  };
  return { lines, answered, deliver, errors: () => errors, runs: () => runs };
};

// A redis-server of the test's own that takes TLS connections only, with a self-signed certificate.
const tlsOnlyRedis = async (): Promise<number> => {
  const certs = await mkdtemp(join(tmpdir(), 'wfwh-redis-tls-'));
  cleanups.push(() => rm(certs, { recursive: true, force: true }));
  const [key, cert] = [join(certs, 'key.pem'), join(certs, 'cert.pem')];
  await run(OPENSSL, [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=127.0.0.1',
    '-keyout',
    key,
    '-out',
    cert,
  ]);
  const tlsOnly = (port: number): string[] => [
    '--tls-port',
    String(port),
    '--tls-cert-file',
    cert,
    '--tls-key-file',
    key,
    '--tls-ca-cert-file',
    cert,
    '--tls-auth-clients',
    'no',
  ];
  // The TLS port is the free one; the plain one is turned off.
  const dir = await mkdtemp(join(tmpdir(), 'wfwh-redis-connect-'));
  const { port, child } = await onFreePort(async (port) => ({
    port,
    child: await launchRedisServer(0, dir, tlsOnly(port)),
  }));
  cleanups.push(() => dispose(child, dir));
  return port;
};

describe.skipIf(!hasRedisServer())('Redis store: a client set up wrong in the first hour', () => {
  it('says once that Redis refused the password, with the fix, answers 503, and serves once the password matches', {
    timeout: 60_000,
  }, async () => {
    const port = await ownRedis(['--requirepass', 'the-right-one']);
    const client = new Redis(`redis://:not-the-password@127.0.0.1:${port}`, { maxRetriesPerRequest: 1 });
    const { lines, answered, deliver, errors, runs } = setUp(client);

    for (let i = 0; i < 3; i++) {
      const answer = await deliver();
      expect(answer.status).toBe(503);
      expect(JSON.parse(answer.body)).toEqual({ error: 'store_unavailable' });
    }
    // Several reconnects later, still the one line.
    await expect.poll(errors, { timeout: 20_000 }).toBeGreaterThanOrEqual(4);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^error workforce-webhooks: Redis refused the username or password/);
    expect(lines[0]).toMatch(/check the password \(and username\) in the Redis URL/);
    expect(lines.join('\n')).not.toMatch(/not-the-password|the-right-one/);
    // Each 503 is logged as a setup to fix, not as an outage.
    expect(answered).toHaveLength(3);
    // The package's name once, not again before the store's own words.
    for (const line of answered)
      expect(line).toMatch(/dedupe store is not set up: Redis refused the username or password/);

    // The server's password put right while the app runs: the client reconnects by itself.
    const admin = new Redis(`redis://:the-right-one@127.0.0.1:${port}`, { maxRetriesPerRequest: 1 });
    cleanups.push(async () => admin.disconnect());
    await admin.config('SET', 'requirepass', 'not-the-password');
    await expect.poll(() => client.status, { timeout: 20_000 }).toBe('ready');
    const answer = await deliver();
    expect(answer.status).toBe(200);
    expect(runs()).toBe(1);
    expect(lines).toHaveLength(1);
  });

  it('says once that Redis wants a password the client did not give', { timeout: 60_000 }, async () => {
    const port = await ownRedis(['--requirepass', 'the-right-one']);
    const client = new Redis(`redis://127.0.0.1:${port}`, { maxRetriesPerRequest: 1 });
    const { lines, deliver, errors } = setUp(client);
    expect((await deliver()).status).toBe(503);
    await expect.poll(errors, { timeout: 20_000 }).toBeGreaterThanOrEqual(3);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/Redis requires a password and the client gave none/);
  });

  it('says once that nothing listens at the address, with the fix, and serves once Redis runs there', {
    timeout: 60_000,
  }, async () => {
    const port = await freePort();
    const client = new Redis(`redis://127.0.0.1:${port}`, { maxRetriesPerRequest: 1 });
    const { lines, answered, deliver, errors, runs } = setUp(client);
    expect((await deliver()).status).toBe(503);
    await expect.poll(errors, { timeout: 20_000 }).toBeGreaterThanOrEqual(3);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/nothing accepts connections at the Redis address \(connect ECONNREFUSED/);
    expect(lines[0]).toMatch(/check the host and port of the Redis URL/);
    // A delivery answered 503 meanwhile is logged with why, as a setup to fix.
    expect((await deliver()).status).toBe(503);
    expect(answered.at(-1)).toMatch(
      /dedupe store is not set up: .*nothing accepts connections at the Redis address/,
    );

    const dir = await mkdtemp(join(tmpdir(), 'wfwh-redis-connect-'));
    const child = await launchRedisServer(port, dir);
    cleanups.push(() => dispose(child, dir));
    await expect.poll(() => client.status, { timeout: 20_000 }).toBe('ready');
    expect((await deliver()).status).toBe(200);
    expect(runs()).toBe(1);

    // Redis gone after it answered is an outage, said once as such (not as a wrong address).
    const before = errors();
    child.kill('SIGKILL');
    await expect.poll(errors, { timeout: 20_000 }).toBeGreaterThanOrEqual(before + 3);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(/Redis is unreachable \(.*\); the client reconnects by itself/);
    // And a delivery answered 503 then is logged as an outage, not as a setup to fix.
    expect((await deliver()).status).toBe(503);
    expect(answered.at(-1)).toBe('workforce-webhooks: the dedupe store is unreachable');
  });

  it('says once that a TLS client got no handshake from a plain server, naming the rediss:// mix-up, and answers 503 in time', {
    timeout: 60_000,
  }, async () => {
    const port = await ownRedis();
    const client = new Redis(`rediss://127.0.0.1:${port}`, { maxRetriesPerRequest: 1, connectTimeout: 500 });
    const { lines, deliver, errors } = setUp(client);
    // The receiver's own deadline (storeTimeoutMs): a wide bound, only against a hang.
    const answer = await Promise.race([deliver(), sleep(30_000).then(() => undefined)]);
    expect(answer?.status).toBe(503);
    await expect.poll(errors, { timeout: 20_000 }).toBeGreaterThanOrEqual(3);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/did not finish the TLS handshake/);
    expect(lines[0]).toMatch(/use a redis:\/\/ URL and no tls option/);
  });

  it.skipIf(!existsSync(OPENSSL))(
    'says once that a plain client was hung up on by a TLS-only server, naming rediss://',
    { timeout: 60_000 },
    async () => {
      const port = await tlsOnlyRedis();
      const client = new Redis(`redis://127.0.0.1:${port}`, { maxRetriesPerRequest: 1 });
      const { lines, deliver, errors } = setUp(client);
      expect((await deliver()).status).toBe(503);
      await expect.poll(errors, { timeout: 20_000 }).toBeGreaterThanOrEqual(3);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/Redis closed the connection before it was ready/);
      expect(lines[0]).toMatch(/use a rediss:\/\/ URL/);
    },
  );

  it.skipIf(!existsSync(OPENSSL))(
    "says once that the server's TLS certificate was refused, naming the CA option",
    { timeout: 60_000 },
    async () => {
      const port = await tlsOnlyRedis();
      const client = new Redis(`rediss://127.0.0.1:${port}`, { maxRetriesPerRequest: 1 });
      const { lines, deliver, errors } = setUp(client);
      expect((await deliver()).status).toBe(503);
      await expect.poll(errors, { timeout: 20_000 }).toBeGreaterThanOrEqual(3);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /the TLS connection to Redis failed \(self-signed certificate\): give the client the server's CA/,
      );
    },
  );

  it("says the Redis user may not run the store's commands, with the ACL that grants them, and serves once granted", {
    timeout: 60_000,
  }, async () => {
    const port = await ownRedis();
    const admin = new Redis(`redis://127.0.0.1:${port}`, { maxRetriesPerRequest: 1 });
    cleanups.push(async () => admin.disconnect());
    // A user made for reading, as a first ACL often is.
    await admin.call('ACL', 'SETUSER', 'app', 'on', '>app-password', '~*', '+@read', '+@connection');
    const client = new Redis(`redis://app:app-password@127.0.0.1:${port}`, { maxRetriesPerRequest: 1 });
    const lines: string[] = [];
    const logger: Logger = {
      debug() {},
      info() {},
      warn() {},
      error: (fields, msg) => void lines.push(`${msg} ${String((fields as { err?: Error }).err?.message)}`),
    };
    const receiver = createReceiver({
      secret,
      store: createRedisStore({ client, logger: silentLogger }),
      logger,
      mode: 'inline',
      ordering: { key: (event) => String(event.id) },
    });
    let runs = 0;
    receiver.on('leave.approved', () => {
      runs += 1;
    });
    cleanups.push(() => receiver.close({ timeoutMs: 2000 }));
    cleanups.push(async () => client.disconnect());
    const deliver = async () => {
      const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
      return receiver.handle({
        method: 'POST',
        headers: delivery.headers,
        body: encoder.encode(delivery.body),
      });
    };
    expect((await deliver()).status).toBe(503);
    expect(lines).toEqual([
      expect.stringMatching(
        /dedupe store is not set up: .*the Redis user may not run a command the store needs \(NOPERM .*\): .*ACL SETUSER <user> ~wfwh:\* \+@read \+@write \+@scripting \+time/,
      ),
    ]);

    // The ACL the line advises, as given: every step of an ordered event then runs.
    await admin.call(
      'ACL',
      'SETUSER',
      'app',
      'resetkeys',
      '~wfwh:*',
      '+@read',
      '+@write',
      '+@scripting',
      '+time',
    );
    expect((await deliver()).status).toBe(200);
    expect(runs).toBe(1);
    expect(lines).toHaveLength(1);
  });

  it("says a replica's address was given, naming the primary's", { timeout: 60_000 }, async () => {
    const primary = await ownRedis();
    const replica = await ownRedis(['--replicaof', '127.0.0.1', String(primary)]);
    const client = new Redis(`redis://127.0.0.1:${replica}`, { maxRetriesPerRequest: 1 });
    client.on('error', () => {});
    cleanups.push(async () => client.disconnect());
    const store = createRedisStore({ client, logger: silentLogger });
    await expect(store.claim(crypto.randomUUID(), 30_000)).rejects.toThrow(
      /Redis answered from a read-only replica \(READONLY .*\): give the store the primary's address/,
    );
  });
});
