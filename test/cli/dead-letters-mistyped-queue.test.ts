// `dead-letters` as a real process on a real redis-server, given a queue name or prefix that no queue ever used: it
// says so with the fix (exit 2), where it used to read an empty queue and print `0 shown`; a queue in use that has no
// dead letters is still listed as empty.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EventQueue, silentLogger } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { queuedEvent } from '../contract/queue-suite.js';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';
import { hasRedisServer } from '../setup/redis-server.js';
import { runCliProcess } from './cli-process.js';

const cli = (args: readonly string[]) => runCliProcess(['dead-letters', ...args]);

describe.skipIf(!redisUrl || !hasRedisServer())(
  'workforce-webhooks dead-letters on a queue no one used',
  () => {
    // A deployed queue that ran one event and failed none.
    const name = uniqueName('cli-used');
    let deployed: EventQueue;

    beforeAll(async () => {
      deployed = createBullmqQueue({ connection: redisUrl, name });
      const ran: string[] = [];
      deployed.start({
        logger: silentLogger,
        process: async (job) => void ran.push(job.event.id),
        onDeadLetter: async () => {},
      });
      const job = queuedEvent();
      await deployed.enqueue(job);
      // Not expect.poll: it is for tests, and this is their set-up.
      const deadline = Date.now() + 30_000;
      while (ran.length === 0) {
        if (Date.now() > deadline) throw new Error('the event did not run in time');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }, 60_000);

    afterAll(async () => {
      await deployed?.close({ timeoutMs: 5000 });
    });

    it('lists a queue in use with no dead letters as empty, exit 0', { timeout: 60_000 }, async () => {
      const { code, out, err } = await cli(['list', '--redis', redisUrl, '--queue', name]);
      expect({ code, err }).toEqual({ code: 0, err: '' });
      expect(out).toMatch(/^0 shown; no more pages$/m);
    });

    it('says a mistyped --queue is no queue of this Redis, with the fix, exit 2, however often it is run', {
      timeout: 60_000,
    }, async () => {
      const typo = `${name}x`;
      for (let run = 0; run < 2; run++) {
        const { code, out, err } = await cli(['list', '--redis', redisUrl, '--queue', typo]);
        expect({ code, out }).toEqual({ code: 2, out: '' });
        expect(err).toMatch(new RegExp(`no queue ${typo} in this Redis: nothing under bull:${typo}:`));
        expect(err).toMatch(/check --queue .*and --prefix/);
        expect(err.trim().split('\n')).toHaveLength(1);
      }
    });

    it('says a mistyped --prefix is no queue of this Redis, exit 2', { timeout: 60_000 }, async () => {
      const { code, err } = await cli(['list', '--redis', redisUrl, '--queue', name, '--prefix', 'bul']);
      expect(code).toBe(2);
      expect(err).toMatch(new RegExp(`no queue ${name} in this Redis: nothing under bul:${name}:`));
    });

    it.each(['replay', 'discard'])(
      '%s of a mistyped --queue says so, exit 2, and writes nothing there',
      {
        timeout: 60_000,
      },
      async (action) => {
        const typo = uniqueName('cli-typo');
        const { code, out, err } = await cli([action, '--redis', redisUrl, '--queue', typo, '--yes']);
        expect({ code, out }).toEqual({ code: 2, out: '' });
        expect(err).toMatch(new RegExp(`no queue ${typo} in this Redis`));
        const admin = connectRedis();
        try {
          expect(await admin.exists(`bull:${typo}:failed`, `bull:${typo}:wait`, `bull:${typo}:events`)).toBe(
            0,
          );
        } finally {
          admin.disconnect();
        }
      },
    );
  },
);
