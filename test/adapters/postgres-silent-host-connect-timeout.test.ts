// A Postgres host that drops packets (a firewall, a failover): the store answers in time, and says once, with the fix,
// that a pool with no connectionTimeoutMillis lets pg's connects to it wait for minutes, holding the pool; an address
// where Postgres never answered (a firewall not yet opened) is said as the setup mistake it is, with its fix.
import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigurationError } from 'workforce-webhooks';
import { createPostgresStore, type PostgresStore } from 'workforce-webhooks/postgres';
import { postgresUrl, uniqueTable } from '../setup/postgres-helpers.js';
import { recordingLogger } from '../support/logger.js';

const closers: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/**
 * A loopback proxy to the run's Postgres that can go silent as a firewall dropping packets does: every connection
 * it holds then stays open and passes nothing either way, for ever, and new ones are accepted and never answered;
 * `answer()` forwards the connections made after it.
 */
async function silentHost(): Promise<{ url: string; silence(): void; answer(): void }> {
  const target = new URL(postgresUrl);
  let silent = false;
  const held = new Set<{ dead: boolean; sockets: Socket[] }>();
  const server: Server = createServer((client) => {
    const link = { dead: silent, sockets: [client] };
    held.add(link);
    client.on('error', () => {});
    if (link.dead) return;
    const upstream = tcpConnect(Number(target.port), target.hostname);
    link.sockets.push(upstream);
    upstream.on('error', () => {});
    client.on('data', (chunk) => link.dead || upstream.write(chunk));
    upstream.on('data', (chunk) => link.dead || client.write(chunk));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => link.dead || client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(async () => {
    for (const link of held) for (const socket of link.sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  const { port } = server.address() as { port: number };
  const url = new URL(postgresUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return {
    url: url.href,
    silence() {
      silent = true;
      for (const link of held) link.dead = true;
    },
    answer() {
      silent = false;
    },
  };
}

async function storeBehind(options: pg.PoolConfig) {
  const { host, store, logger } = await unmigratedStoreBehind(options);
  await store.migrate();
  return { host, store, logger };
}

async function unmigratedStoreBehind(options: pg.PoolConfig, timeoutMs = 500) {
  const host = await silentHost();
  const pool = new pg.Pool({ connectionString: host.url, max: 2, ...options });
  pool.on('error', () => {});
  // The pool's connects into silence never end without connectionTimeoutMillis: not waited for.
  closers.push(() => void pool.end().catch(() => {}));
  const logger = recordingLogger();
  const store: PostgresStore = createPostgresStore({
    pool,
    table: uniqueTable('silent_host'),
    timeoutMs,
    cleanupIntervalMs: 0,
    logger,
  });
  closers.push(() => store.close());
  return { host, store, logger };
}

// What a claim ends with: claimed, or the code it rejected with.
const claimed = (store: PostgresStore): Promise<string> =>
  store.claim(crypto.randomUUID(), 30_000).then(
    (claim) => claim.status,
    (error: { code?: string }) => error.code ?? String(error),
  );

const connectWarnings = (logger: ReturnType<typeof recordingLogger>) =>
  logger.lines.filter((line) => line.level === 'warn' && line.msg?.includes('connectionTimeoutMillis'));

describe.skipIf(!postgresUrl)('the Postgres store on a host that goes silent', () => {
  it('answers in time, and says once, with the fix, that the pool has no connectionTimeoutMillis', {
    timeout: 120_000,
  }, async () => {
    const { host, store, logger } = await storeBehind({});
    // Normal traffic: nothing said.
    expect(await claimed(store)).toBe('claimed');
    expect(await claimed(store)).toBe('claimed');
    expect(connectWarnings(logger)).toEqual([]);

    host.silence();
    for (let i = 0; i < 5; i++) expect(await claimed(store)).toBe('store_unavailable');
    const said = connectWarnings(logger);
    expect(said).toHaveLength(1);
    expect(said[0]!.msg).toMatch(/connectionTimeoutMillis: 5000/);
    expect(said[0]!.msg).toMatch(/^workforce-webhooks: /);
  });

  it('serves again once the host answers, on a pool with connectionTimeoutMillis, and says nothing of it', {
    timeout: 120_000,
  }, async () => {
    const { host, store, logger } = await storeBehind({ connectionTimeoutMillis: 1000 });
    expect(await claimed(store)).toBe('claimed');

    host.silence();
    for (let i = 0; i < 5; i++) expect(await claimed(store)).toBe('store_unavailable');
    host.answer();
    await expect.poll(() => claimed(store), { timeout: 60_000, interval: 200 }).toBe('claimed');
    expect(connectWarnings(logger)).toEqual([]);
  });

  it.each([
    ['the store’s deadline', {}, 500],
    ['the pool’s connectionTimeoutMillis', { connectionTimeoutMillis: 300 }, 5000],
  ] as const)(
    'says, when Postgres never answered at the address, to check it and the firewall, cut by %s',
    {
      timeout: 120_000,
    },
    async (_by, options, timeoutMs) => {
      const { host, store } = await unmigratedStoreBehind(
        { connectionTimeoutMillis: 1000, ...options },
        timeoutMs,
      );
      host.silence();
      const said =
        /^workforce-webhooks: (no answer within 500 ms|Connection terminated due to connection timeout) \(Postgres has never answered at this address\): check the host and port of the connection string, that Postgres runs there, and that no firewall \(a security group\) drops connections to it/;
      const migrated = store.migrate();
      await expect(migrated).rejects.toThrow(ConfigurationError);
      await expect(migrated).rejects.toThrow(said);
      await expect(store.claim(crypto.randomUUID(), 30_000)).rejects.toThrow(said);

      // The firewall opened: the next call connects, with no restart.
      host.answer();
      await expect
        .poll(() => store.migrate().then(() => 'migrated', String), { timeout: 60_000 })
        .toBe('migrated');
      expect(await claimed(store)).toBe('claimed');
    },
  );
});
