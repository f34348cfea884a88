// A pg pool whose connection string pg would misread (no scheme, a password with a reserved character): the store
// refuses it when made, saying what is wrong and the fix, never the string (it may hold a password).
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigurationError, silentLogger } from 'workforce-webhooks';
import { createPostgresStore } from 'workforce-webhooks/postgres';
import { postgresUrl, uniqueTable } from '../setup/postgres-helpers.js';

const pools: pg.Pool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.end()));
});

const storeOn = (connectionString: string) => {
  const pool = new pg.Pool({ connectionString, connectionTimeoutMillis: 5000 });
  pools.push(pool);
  return createPostgresStore({ pool, table: uniqueTable('url'), cleanupIntervalMs: 0, logger: silentLogger });
};

const refusal = (connectionString: string): unknown => {
  try {
    storeOn(connectionString);
  } catch (error) {
    return error;
  }
  return undefined;
};

describe('the Postgres store on a connection string pg would misread', () => {
  it.each([
    [
      'a word',
      'hunter2db',
      /is no URL \(pg reads it as a database on a host named "base"\): write it as postgres:\/\/user:password@host:port\/database$/,
    ],
    [
      'a URL without its scheme',
      'app:hunter2@db.internal:5432/app',
      /is no URL .*: write it as postgres:\/\//,
    ],
    [
      'a # in the password',
      'postgres://app:hun#ter2@db.internal:5432/app',
      /is not a valid URL: percent-encode any @ : \/ \? # % or space in the user and password \(encodeURIComponent\)/,
    ],
    [
      'a / in a password of digits first',
      'postgres://app:1234/hunter2@db.internal:5432/app',
      /has an @ after its host .*: percent-encode the password \(encodeURIComponent\)$/,
    ],
  ])('refuses %s when made, with the fix and no password', (_, connectionString, fix) => {
    const error = refusal(connectionString);
    expect(error).toBeInstanceOf(ConfigurationError);
    const { message } = error as Error;
    expect(message).toMatch(/^workforce-webhooks: the pg pool's connectionString /);
    expect(message).toMatch(fix);
    expect(message).not.toMatch(/hunter2/);
  });

  it.each([
    ['an unescaped @ in the password', 'postgres://app:hun@ter2@db.internal:5432/app'],
    ['another scheme pg reads alike', 'postgresql://app:hunter2@db.internal:5432/app'],
    ['a socket directory', '/var/run/postgresql app'],
    ['an empty host', 'postgres://app@/app'],
    ['an empty string, which pg ignores', ''],
  ])('takes %s, which pg reads as written', (_, connectionString) => {
    expect(refusal(connectionString)).toBeUndefined();
  });

  it.skipIf(!postgresUrl)('serves on the connection string of a running Postgres', async () => {
    const store = storeOn(postgresUrl);
    await store.migrate();
    expect((await store.claim(crypto.randomUUID(), 30_000)).status).toBe('claimed');
    store.close();
  });
});
