// `dead-letters --concurrency` as a real process on a real redis-server: 1 to 100 runs, anything else is a usage
// mistake (exit 2) said before anything is read or replayed.
import { describe, expect, it } from 'vitest';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';
import { hasRedisServer } from '../setup/redis-server.js';
import { runCliProcess } from './cli-process.js';

describe.skipIf(!redisUrl || !hasRedisServer())('dead-letters --concurrency', () => {
  // A queue with no dead letters: a replay or discard that runs says so and exits 0.
  const base = (action: string) => [
    'dead-letters',
    action,
    '--redis',
    redisUrl,
    '--queue',
    uniqueName('cli-concurrency'),
    '--yes',
  ];

  it.each(['replay', 'discard'])('%s refuses a --concurrency above 100 with exit 2', async (action) => {
    const { code, out, err } = await runCliProcess([...base(action), '--concurrency', '101']);
    expect({ code, out }).toEqual({ code: 2, out: '' });
    expect(err).toMatch(/--concurrency must be at most 100, got 101/);
  });

  it('refuses a --concurrency too large for a number of workers with exit 2', async () => {
    const { code, err } = await runCliProcess([...base('replay'), '--concurrency', '1000000000000']);
    expect(code).toBe(2);
    expect(err).toMatch(/--concurrency must be at most 100/);
  });

  it('refuses a --concurrency of 0 with exit 2', async () => {
    const { code, err } = await runCliProcess([...base('replay'), '--concurrency', '0']);
    expect(code).toBe(2);
    expect(err).toMatch(/--concurrency must be at least 1/);
  });

  it.each(['1', '100'])('runs with --concurrency %s', async (concurrency) => {
    const args = base('replay');
    // A queue in use (a started receiver's key) with no dead letters: a name never used is refused as a typo.
    const admin = connectRedis();
    await admin.set(`bull:${args[args.indexOf('--queue') + 1]}:workforce-webhooks:since`, String(Date.now()));
    admin.disconnect();
    const { code, out } = await runCliProcess([...args, '--concurrency', concurrency]);
    expect(code).toBe(0);
    expect(out).toMatch(/^no dead letters of queue /);
  });
});
