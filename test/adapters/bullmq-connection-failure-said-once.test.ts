import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryStore, createReceiver, type Logger } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { hasRedisServer, startRedisServer } from '../setup/redis-server.js';

const secret = 'whsec_bullmq_said_once';
const encoder = new TextEncoder();
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

// Every line the receiver logs at warn or error, with its fields.
function recordingLogger(): { logger: Logger; lines: { level: string; msg: string; fields: object }[] } {
  const lines: { level: string; msg: string; fields: object }[] = [];
  const keep = (level: string) => (fields: object, msg?: string) =>
    void lines.push({ level, msg: msg ?? '', fields });
  return { logger: { debug() {}, info() {}, warn: keep('warn'), error: keep('error') }, lines };
}

// The connection's lines: those of BullMQ's error events, whatever they say (not the per-delivery refusals).
const connectionLines = (lines: { msg: string }[]) =>
  lines.filter(({ msg }) => !msg.includes('the queue refused the event')).map(({ msg }) => msg);
const connectionKinds = (lines: { msg: string; fields: object }[]) =>
  lines
    .filter(({ msg }) => !msg.includes('the queue refused the event'))
    .map(({ fields }) => (fields as { kind?: string }).kind);

describe.skipIf(!hasRedisServer())('createBullmqQueue while its connections keep failing', () => {
  it('says a refused password once with its fix however often the connections retry, and again after a ready', {
    timeout: 120_000,
  }, async () => {
    const server = await startRedisServer(['--requirepass', 'the-right-one']);
    cleanups.push(() => server.dispose());
    const { port } = server;
    let retries = 0;
    const { logger, lines } = recordingLogger();
    const receiver = createReceiver({
      secret,
      store: createMemoryStore(),
      queue: createBullmqQueue({
        connection: {
          host: '127.0.0.1',
          port,
          password: 'not-the-password',
          retryStrategy: () => {
            retries++;
            return 20;
          },
        },
        name: 'said-once',
      }),
      logger,
    }).on('leave.approved', () => {});
    cleanups.push(() => receiver.close({ timeoutMs: 2000 }));

    await expect.poll(() => retries, { timeout: 60_000, interval: 50 }).toBeGreaterThanOrEqual(15);
    const refused = connectionLines(lines);
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatch(/Redis refused the username or password/);
    expect(refused[0]).toMatch(/check the password \(and username\) in the Redis URL/);
    expect(JSON.stringify(lines)).not.toMatch(/not-the-password|the-right-one/);
    expect(lines.every(({ msg }) => !msg.includes('BullMQ error'))).toBe(true);

    // The password put right: the connections log in; then changed again under them, and their connections cut.
    const admin = new Redis(`redis://:the-right-one@127.0.0.1:${port}`, { maxRetriesPerRequest: 1 });
    cleanups.push(async () => admin.disconnect());
    await admin.config('SET', 'requirepass', 'not-the-password');
    const id = crypto.randomUUID();
    const delivery = await createSignedDelivery({ secret, type: 'leave.approved', id });
    const deliver = () =>
      receiver.handle({ method: 'POST', headers: delivery.headers, body: encoder.encode(delivery.body) });
    await expect.poll(async () => (await deliver()).status, { timeout: 30_000, interval: 250 }).toBe(202);
    await admin.config('SET', 'requirepass', 'yet-another-one');
    await admin.auth('yet-another-one');
    const before = retries;
    const said = lines.length;
    await admin.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
    await expect.poll(() => retries - before, { timeout: 60_000, interval: 50 }).toBeGreaterThanOrEqual(15);
    // Said again after the ready: each kind once (the cut itself may be said, as a reset connection).
    const kinds = connectionKinds(lines.slice(said));
    expect(kinds).toContain('WRONGPASS');
    expect(new Set(kinds).size).toBe(kinds.length);
  });

  it('says once that Redis is unreachable while it is away, however often the connections retry', {
    timeout: 120_000,
  }, async () => {
    const server = await startRedisServer();
    cleanups.push(() => server.dispose());
    let retries = 0;
    const { logger, lines } = recordingLogger();
    const receiver = createReceiver({
      secret,
      store: createMemoryStore(),
      queue: createBullmqQueue({
        connection: {
          host: '127.0.0.1',
          port: server.port,
          retryStrategy: () => {
            retries++;
            return 20;
          },
        },
        name: 'away',
      }),
      logger,
    }).on('leave.approved', () => {});
    cleanups.push(() => receiver.close({ timeoutMs: 2000 }));
    const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
    const answer = await receiver.handle({
      method: 'POST',
      headers: delivery.headers,
      body: encoder.encode(delivery.body),
    });
    expect(answer.status).toBe(202);

    await server.stop();
    await expect.poll(() => retries, { timeout: 60_000, interval: 50 }).toBeGreaterThanOrEqual(15);
    const said = connectionLines(lines);
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/Redis is unreachable/);
    expect(lines.every(({ msg }) => !msg.includes('BullMQ error'))).toBe(true);
  });
});
