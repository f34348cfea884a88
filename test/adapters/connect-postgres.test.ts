// The Postgres store on a pool set up wrong in the first hour (password, database, role, address, SSL): each said with
// the fix, by migrate() and by the log of the deliveries it answers 503, and served once the setup is right.
import { execFile } from 'node:child_process';
import { chown, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigurationError, createConsoleLogger, createReceiver, silentLogger } from 'workforce-webhooks';
import { createPostgresStore } from 'workforce-webhooks/postgres';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { connectPostgres, postgresUrl, uniqueTable } from '../setup/postgres-helpers.js';
import { hasPostgres, POSTGRES_BIN } from '../setup/postgres-server.js';
import { freePort, onFreePort } from '../support/free-port.js';

const exec = promisify(execFile);
const secret = 'whsec_postgres_first_hour';
const encoder = new TextEncoder();
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

// A PostgreSQL of the test's own that asks for a password on TCP (scram-sha-256), trusting its Unix socket for the
// test's own admin pool; stopped and removed after the test.
const passwordPostgres = async (
  hba?: string,
): Promise<{
  readonly port: number;
  readonly admin: pg.Pool;
  readonly stop: () => Promise<unknown>;
}> => {
  const dir = await mkdtemp(join(tmpdir(), 'wfwh-postgres-connect-'));
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const [{ stdout: uid }, { stdout: gid }] = await Promise.all([
      exec('id', ['-u', 'postgres']),
      exec('id', ['-g', 'postgres']),
    ]);
    await chown(dir, Number(uid.trim()), Number(gid.trim()));
  }
  const run = (binary: string, args: readonly string[]) => {
    const path = join(POSTGRES_BIN ?? '', binary);
    return asRoot
      ? exec('runuser', ['-u', 'postgres', '--', path, ...args], { timeout: 120_000 })
      : exec(path, [...args], { timeout: 120_000 });
  };
  const data = join(dir, 'data');
  await run('initdb', [
    '-D',
    data,
    '-U',
    'postgres',
    '--auth-local=trust',
    '--auth-host=scram-sha-256',
    '-E',
    'UTF8',
    '--no-sync',
  ]);
  // The file initdb wrote, replaced in place (its owner, the server's user, stays), before the server starts.
  if (hba !== undefined) await writeFile(join(data, 'pg_hba.conf'), hba);
  const port = await onFreePort(async (free) => {
    const options = `-p ${free} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${dir} -c fsync=off`;
    await run('pg_ctl', ['start', '-w', '-t', '60', '-D', data, '-l', join(dir, 'log'), '-o', options]);
    return free;
  });
  const admin = new pg.Pool({ host: dir, port, user: 'postgres', database: 'postgres', max: 2 });
  admin.on('error', () => {});
  const stop = () => run('pg_ctl', ['stop', '-w', '-t', '60', '-D', data, '-m', 'immediate']).catch(() => {});
  cleanups.push(async () => {
    await admin.end().catch(() => {});
    await stop();
    await rm(dir, { recursive: true, force: true });
  });
  return { port, admin, stop };
};

// A pool on `config`, closed after the test; its idle connections' errors are heard (the store's own are not asked).
const poolOn = (config: pg.PoolConfig): pg.Pool => {
  const pool = new pg.Pool({ max: 3, ...config });
  pool.on('error', () => {});
  cleanups.push(() => pool.end().catch(() => {}));
  return pool;
};

// A receiver on the store, logging as it does with no logger given, onto `lines` instead of stderr.
const receiving = (pool: pg.Pool) => {
  const lines: string[] = [];
  const store = createPostgresStore({
    pool,
    table: uniqueTable('connect'),
    cleanupIntervalMs: 0,
    logger: silentLogger,
  });
  cleanups.push(async () => store.close());
  const receiver = createReceiver({
    secret,
    store,
    mode: 'inline',
    logger: createConsoleLogger({
      console: {
        warn: (msg: unknown) => lines.push(`warn ${msg}`),
        error: (msg: unknown) => lines.push(`error ${msg}`),
      },
    }),
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
  return { store, lines, deliver, runs: () => runs };
};

describe.skipIf(!hasPostgres())('Postgres store: a password Postgres refuses', () => {
  it('says the password is refused, with the fix, once for many deliveries, and serves once it matches', {
    timeout: 180_000,
  }, async () => {
    const { port, admin } = await passwordPostgres();
    await admin.query("CREATE ROLE app LOGIN PASSWORD 'the-right-one'; GRANT ALL ON SCHEMA public TO app");
    const pool = poolOn({ connectionString: `postgres://app:not-the-password@127.0.0.1:${port}/postgres` });
    const { store, lines, deliver, runs } = receiving(pool);

    const migrated = store.migrate();
    await expect(migrated).rejects.toThrow(ConfigurationError);
    await expect(migrated).rejects.toThrow(
      /Postgres refused the password \(password authentication failed for user "app"\): check the user and password/,
    );
    for (let i = 0; i < 3; i++) {
      const answer = await deliver();
      expect(answer.status).toBe(503);
      expect(JSON.parse(answer.body)).toEqual({ error: 'store_unavailable' });
    }
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /dedupe store is not set up: .*Postgres refused the password .*: check the user and password/,
    );
    expect(lines.join('\n')).not.toMatch(/not-the-password|the-right-one/);

    // The role's password put right while the app runs: the next connection logs in.
    await admin.query("ALTER ROLE app PASSWORD 'not-the-password'");
    await store.migrate();
    expect((await deliver()).status).toBe(200);
    expect(runs()).toBe(1);
  });

  it('says the pool gave no password where Postgres asks for one', { timeout: 180_000 }, async () => {
    const { port } = await passwordPostgres();
    const pool = poolOn({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres' });
    const { store } = receiving(pool);
    await expect(store.migrate()).rejects.toThrow(/Postgres asks for a password and the pool gave none/);
  });

  it('calls a refused connection after Postgres answered an outage, not a wrong address', {
    timeout: 180_000,
  }, async () => {
    const { port, admin, stop } = await passwordPostgres();
    await admin.query("CREATE ROLE app LOGIN PASSWORD 'the-right-one'; GRANT ALL ON SCHEMA public TO app");
    await admin.end();
    const pool = poolOn({ connectionString: `postgres://app:the-right-one@127.0.0.1:${port}/postgres` });
    const { store } = receiving(pool);
    await store.migrate();
    await stop();
    // The pool drops its idle connection the server closed, so the next call connects anew.
    await expect.poll(() => pool.totalCount, { timeout: 30_000 }).toBe(0);
    const failed = await store.migrate().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failed).toBeInstanceOf(Error);
    expect(failed).not.toBeInstanceOf(ConfigurationError);
    expect(String((failed as Error).message)).toMatch(/ECONNREFUSED/);
  });
});

describe.skipIf(!postgresUrl)('Postgres store: a connection string that names what is not there', () => {
  const url = (change: (url: URL) => void): string => {
    const parsed = new URL(postgresUrl);
    change(parsed);
    return parsed.href;
  };

  it('says the database does not exist, with the fix, and serves once it is created', async () => {
    const database = uniqueTable('db');
    const pool = poolOn({ connectionString: url((u) => (u.pathname = `/${database}`)) });
    const { store, lines, deliver, runs } = receiving(pool);
    await expect(store.migrate()).rejects.toThrow(
      new RegExp(
        `the connection string's database does not exist \\(database "${database}" does not exist\\)`,
      ),
    );
    expect((await deliver()).status).toBe(503);
    expect(lines).toEqual([
      expect.stringMatching(
        /not set up: .*the connection string's database does not exist .*: check its name/,
      ),
    ]);

    const admin = connectPostgres();
    await admin.query(`CREATE DATABASE ${database}`);
    cleanups.unshift(() => admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).then(() => {}));
    await store.migrate();
    expect((await deliver()).status).toBe(200);
    expect(runs()).toBe(1);
  });

  it('says the role does not exist', async () => {
    const role = uniqueTable('role');
    const pool = poolOn({ connectionString: url((u) => (u.username = role)) });
    const { store } = receiving(pool);
    await expect(store.migrate()).rejects.toThrow(
      /Postgres turned the login away \(role ".*" does not exist\)/,
    );
  });

  it('says nothing listens at the address, with the fix', async () => {
    const port = await freePort();
    const pool = poolOn({ connectionString: url((u) => (u.port = String(port))) });
    const { store, lines, deliver } = receiving(pool);
    await expect(store.migrate()).rejects.toThrow(
      /nothing accepts connections at the Postgres address \(connect ECONNREFUSED .*\): check the host and port/,
    );
    expect((await deliver()).status).toBe(503);
    expect(lines).toEqual([
      expect.stringMatching(
        /not set up: .*nothing accepts connections at the Postgres address .*: check the host and port/,
      ),
    ]);
  });

  it('says the pool asks for SSL of a Postgres that does not speak it', async () => {
    const pool = poolOn({ connectionString: postgresUrl, ssl: { rejectUnauthorized: false } });
    const { store } = receiving(pool);
    await expect(store.migrate()).rejects.toThrow(
      /the pool asks for SSL and this Postgres does not speak it/,
    );
  });
});

describe.skipIf(!hasPostgres())('Postgres store: a Postgres that takes SSL connections only', () => {
  it('says the pool must ask for SSL', { timeout: 180_000 }, async () => {
    const { port } = await passwordPostgres(
      'local all all trust\nhostnossl all all 127.0.0.1/32 reject\nhostssl all all 127.0.0.1/32 scram-sha-256\n',
    );
    const pool = poolOn({ connectionString: `postgres://postgres:any@127.0.0.1:${port}/postgres` });
    const { store } = receiving(pool);
    await expect(store.migrate()).rejects.toThrow(
      /Postgres takes only SSL connections from this host \(.*no encryption\): give the pool ssl/,
    );
  });
});
