// A Redis URL written with another scheme (http://, tcp://) is taken by ioredis as a Unix socket path and can never
// connect: the store, the BullMQ queue and the dead-letters command say at once that a Redis URL starts with
// redis:// or rediss://, with the URL to write, instead of "Redis is unreachable (connect ENOENT //host:port)".
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createRedisStore } from 'workforce-webhooks/redis';
import { runCli } from '../../cli/run.js';
import { capture } from '../cli/capture.js';

const clients: Redis[] = [];
afterEach(() => {
  for (const client of clients.splice(0)) client.disconnect();
});
// Never connected: the check is made when the store or queue is created.
const lazy = (url: string): Redis => {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  client.on('error', () => {});
  clients.push(client);
  return client;
};

describe('a Redis URL with a scheme other than redis:// or rediss://', () => {
  it.each(['http://127.0.0.1:6379', 'tcp://redis.internal:6379/0', 'https://:s3cret@cache.example.com:6380'])(
    'createRedisStore refuses a client made from %s, saying the URL to write',
    (url) => {
      const client = lazy(url);
      let thrown: unknown;
      try {
        createRedisStore({ client });
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toMatchObject({ code: 'invalid_options' });
      const { message } = thrown as Error;
      expect(message).toContain('a Redis URL starts with redis:// (or rediss:// for TLS)');
      const rest = url.replace(/^[a-z]+:\/\//, '').replace(/^:s3cret@/, '***@');
      expect(message).toContain(`write redis://${rest}`);
      expect(message).not.toContain('s3cret');
    },
  );

  it('createBullmqQueue refuses it as a URL, as a client and as options, before opening any connection', () => {
    for (const connection of [
      'http://127.0.0.1:6379',
      lazy('http://127.0.0.1:6379'),
      { path: '//127.0.0.1:6379' },
    ]) {
      expect(() => createBullmqQueue({ connection, name: 'never-opened' })).toThrow(
        /createBullmqQueue's connection cannot reach Redis: a Redis URL starts with redis:\/\/ .*write redis:\/\/127\.0\.0\.1:6379/,
      );
    }
  });

  it('leaves redis://, rediss://, host:port and socket paths alone', () => {
    for (const url of [
      'redis://127.0.0.1:6379',
      'rediss://cache.example.com:6380',
      'localhost:6379',
      '/tmp/redis.sock',
      'unix:///tmp/redis.sock',
    ]) {
      expect(() => createRedisStore({ client: lazy(url) })).not.toThrow();
    }
  });

  it('the dead-letters command answers --redis http://... with the fix, exit 2, without trying to connect', {
    timeout: 30_000,
  }, async () => {
    const io = capture();
    const code = await runCli(
      ['dead-letters', 'list', '--redis', 'http://user:pw@127.0.0.1:6379', '--queue', 'workforce-webhooks'],
      io,
    );
    expect(io.err).toContain(
      'workforce-webhooks: error: --redis: a Redis URL starts with redis:// (or rediss:// for TLS), so ioredis took this one as the Unix socket path //***@127.0.0.1:6379 and could never connect: write redis://***@127.0.0.1:6379',
    );
    expect(io.err).not.toContain('pw@');
    expect(io.err).not.toContain('ENOENT');
    expect(code).toBe(2);
  });
});
