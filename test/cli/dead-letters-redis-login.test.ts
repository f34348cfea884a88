// `dead-letters` on a Redis that asks for a password: a --redis without one, or with a wrong one, is said as such
// with the fix (exit 1), not as a Redis that cannot be reached; the password is never printed.
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { hasRedisServer, startRedisServer } from '../setup/redis-server.js';
import { runCliProcess } from './cli-process.js';

const PASSWORD = 'redis-login-Kq3';

describe.skipIf(!hasRedisServer())('dead-letters on a Redis that asks for a password', () => {
  it('says NOAUTH and WRONGPASS with the fix, not "cannot reach"; exit 1', { timeout: 90_000 }, async ({
    onTestFinished,
  }) => {
    const server = await startRedisServer();
    onTestFinished(() => server.dispose());
    const admin = new Redis(server.url);
    await admin.config('SET', 'requirepass', PASSWORD);
    admin.disconnect();
    const url = new URL(server.url);

    const none = await runCliProcess([
      'dead-letters',
      'list',
      '--redis',
      url.href,
      '--queue',
      'workforce-webhooks',
    ]);
    expect(none.err).toBe(
      'workforce-webhooks: error: Redis at --redis requires a password and --redis gives none (NOAUTH): put it in the URL before the host, as :password@host:port\n',
    );
    expect(none.code).toBe(1);

    url.password = `${PASSWORD}-not`;
    const wrong = await runCliProcess([
      'dead-letters',
      'list',
      '--redis',
      url.href,
      '--queue',
      'workforce-webhooks',
    ]);
    expect(wrong.err).toBe(
      'workforce-webhooks: error: Redis at --redis refused the user name or password in --redis (WRONGPASS): check them, written before the host as user:password@host:port\n',
    );
    expect(wrong.code).toBe(1);
    expect(none.err + wrong.err + none.out + wrong.out).not.toContain(PASSWORD);
  });
});
