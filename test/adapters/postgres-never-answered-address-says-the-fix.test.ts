// A first deploy whose Postgres address never answers (a firewall, a security group not yet opened): each delivery's
// 503 is logged with the fix (the host, port and firewall to check), not as a bare outage.
import { createServer, type Socket } from 'node:net';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { createReceiver } from 'workforce-webhooks';
import { createPostgresStore } from 'workforce-webhooks/postgres';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { recordingLogger } from '../support/logger.js';

const secret = 'whsec_postgres_never_answered';
const encoder = new TextEncoder();
const closers: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

// A loopback address that accepts connections and never says a word, as a host behind a firewall that drops packets
// looks to pg (which waits for the server's first bytes).
async function silentAddress(): Promise<string> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  return `postgres://app:hunter2@127.0.0.1:${(server.address() as { port: number }).port}/app`;
}

const FIX =
  /no answer within 2000 ms \(Postgres has never answered at this address\): check the host and port of the connection string, that Postgres runs there, and that no firewall/;

// A receiver on a store whose Postgres address never answers, and `deliver()` to post it a signed delivery.
async function receiverOnSilentAddress(receiverOptions: { storeTimeoutMs?: number }) {
  const pool = new pg.Pool({ connectionString: await silentAddress() });
  pool.on('error', () => {});
  // Its connects into silence end only with the server's sockets: not waited for.
  closers.push(() => void pool.end().catch(() => {}));
  const logger = recordingLogger();
  const store = createPostgresStore({ pool, cleanupIntervalMs: 0, logger });
  closers.push(() => store.close());
  const receiver = createReceiver({ secret, store, logger, ...receiverOptions });
  receiver.on('employee.created', () => {});
  const deliver = async () => {
    const delivery = await createSignedDelivery({ secret, type: 'employee.created' });
    return receiver.handle({
      method: 'POST',
      headers: delivery.headers,
      body: encoder.encode(delivery.body),
    });
  };
  // Settles once every store call made before it reached the store's own deadline (timers of one length fire in
  // the order they were set).
  const storeDeadlinesPassed = () => store.claim(crypto.randomUUID(), 30_000).catch(() => {});
  return { logger, deliver, storeDeadlinesPassed };
}

describe('the Postgres store on an address that never answered, behind a receiver', () => {
  it('logs each delivery it cannot take with the fix, on the defaults', { timeout: 60_000 }, async () => {
    const { logger, deliver, storeDeadlinesPassed } = await receiverOnSilentAddress({});
    for (let i = 0; i < 2; i++) expect((await deliver()).status).toBe(503);
    await storeDeadlinesPassed();
    const errors = logger.lines.filter((line) => line.level === 'error');
    expect(errors).toHaveLength(2);
    for (const line of errors) expect(line.msg).toMatch(FIX);
    expect(JSON.stringify(logger.lines)).not.toContain('hunter2');
  });

  it('logs each delivery with the fix when the receiver gives up on the store first, and warns once when the store does', {
    timeout: 60_000,
  }, async () => {
    const { logger, deliver, storeDeadlinesPassed } = await receiverOnSilentAddress({ storeTimeoutMs: 1000 });
    for (let i = 0; i < 3; i++) expect((await deliver()).status).toBe(503);
    await storeDeadlinesPassed();
    const errors = logger.lines.filter((line) => line.level === 'error');
    expect(errors).toHaveLength(3);
    for (const line of errors)
      expect(JSON.stringify(line)).toMatch(
        /Postgres has never answered at this address\): check the host and port/,
      );
    const told = logger.lines.filter((line) => FIX.test(line.msg ?? ''));
    expect(told).toHaveLength(1);
    expect(told[0]!.level).toBe('warn');
    expect(told[0]!.msg).toMatch(/^workforce-webhooks: no answer/);
    expect(JSON.stringify(logger.lines)).not.toContain('hunter2');
  });
});
