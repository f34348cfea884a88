// `dead-letters` given a read-only replica's URL: refused at once with the primary's address, nothing replayed, and
// the process ends (the queue's connections to a replica would keep it alive after its first refused write).
import { describe, expect, it } from 'vitest';
import { HandlerFailure, silentLogger } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { queuedEvent } from '../contract/queue-suite.js';
import { connectRedis, uniqueName } from '../setup/redis-helpers.js';
import { hasRedisServer, startRedisServer } from '../setup/redis-server.js';
import { runCliProcess } from './cli-process.js';

const LETTERS = 3;

describe.skipIf(!hasRedisServer())('dead-letters on a replica', () => {
  it('names the primary, exits 2, and leaves the letters as they were', { timeout: 180_000 }, async ({
    onTestFinished,
  }) => {
    const primary = await startRedisServer();
    onTestFinished(() => primary.dispose());
    const replica = await startRedisServer(['--replicaof', '127.0.0.1', String(primary.port)]);
    onTestFinished(() => replica.dispose());
    const name = uniqueName('cli-replica');
    const queue = createBullmqQueue({ connection: primary.url, name, attempts: 1 });
    let dead = 0;
    let allDead!: () => void;
    const buried = new Promise<void>((resolve) => {
      allDead = resolve;
    });
    queue.start({
      logger: silentLogger,
      process: async () => {
        throw new HandlerFailure([new TypeError('down')], []);
      },
      onDeadLetter: async () => {
        if (++dead === LETTERS) allDead();
      },
    });
    for (let i = 0; i < LETTERS; i++) await queue.enqueue(queuedEvent());
    await buried;
    await queue.close({ timeoutMs: 5000 });
    // The replica holds the letters too before the command runs.
    const onReplica = connectRedis(replica.url);
    onTestFinished(() => onReplica.disconnect());
    await expect.poll(() => onReplica.zcard(`bull:${name}:failed`), { timeout: 60_000 }).toBe(LETTERS);

    for (const action of ['replay', 'discard', 'list']) {
      // A hang would end only at the test's time limit; the process must end on its own.
      const { code, out, err } = await runCliProcess([
        'dead-letters',
        action,
        '--redis',
        replica.url,
        '--queue',
        name,
        '--yes',
      ]);
      expect(err).toContain(`Redis at --redis is a read-only replica of 127.0.0.1:${primary.port}`);
      expect(err).toContain("give --redis the primary's URL");
      expect(err).not.toMatch(/\n\s+at /);
      expect(out).toBe('');
      expect(code).toBe(2);
    }
    const onPrimary = connectRedis(primary.url);
    onTestFinished(() => onPrimary.disconnect());
    expect(await onPrimary.zcard(`bull:${name}:failed`)).toBe(LETTERS);
  });
});
