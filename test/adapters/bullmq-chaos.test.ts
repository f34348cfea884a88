// The BullMQ queue against a Redis that misbehaves: another app's jobs on its queue, a Redis emptied under it.
import { Queue } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import { createReceiver, type DeadLetter, type Logger, type Receiver } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createRedisStore } from 'workforce-webhooks/redis';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';
import { hasRedisServer, startRedisServer } from '../setup/redis-server.js';

const secret = 'whsec_bullmq_chaos_test';
const encoder = new TextEncoder();

const toClose: { close(options?: { timeoutMs?: number }): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(toClose.splice(0).map((each) => each.close({ timeoutMs: 2000 })));
});

async function deliver(receiver: Receiver, id: string = crypto.randomUUID()) {
  const delivery = await createSignedDelivery({ secret, type: 'leave.approved', id });
  return receiver.handle({ method: 'POST', headers: delivery.headers, body: encoder.encode(delivery.body) });
}

interface Line {
  readonly level: string;
  readonly fields: Record<string, unknown>;
  readonly message: string;
}

function recordingLogger(): { lines: Line[]; logger: Logger } {
  const lines: Line[] = [];
  const at = (level: string) => (fields: object, message: string) => {
    lines.push({ level, fields: fields as Record<string, unknown>, message });
  };
  return { lines, logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') } };
}

function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

describe('createBullmqQueue, its lock settings', () => {
  it('refuses a lock renewed no sooner than it lapses, and a stall count that is not a count', () => {
    // Renewed at or after its end, the lock of any longer job lapses under a live worker, which loses the job.
    for (const lockRenewMs of [10_000, 20_000])
      expect(() =>
        createBullmqQueue({ connection: 'redis://127.0.0.1:1', lockDurationMs: 10_000, lockRenewMs }),
      ).toThrow(/lockRenewMs must be below lockDurationMs/);
    for (const maxStalledCount of [-1, 1.5, Number.NaN])
      expect(() => createBullmqQueue({ connection: 'redis://127.0.0.1:1', maxStalledCount })).toThrow(
        /maxStalledCount must be a non-negative integer/,
      );
  });
});

describe.skipIf(!redisUrl)(
  'createBullmqQueue, when Redis holds what it should not, or loses what it held',
  () => {
    it("fails another app's job on its queue at once, with an error log, and never hands it to handlers or onDeadLetter", async () => {
      const name = uniqueName('foreign');
      const { lines, logger } = recordingLogger();
      const letters: DeadLetter[] = [];
      let runs = 0;
      const receiver = createReceiver({
        secret,
        logger,
        store: createRedisStore({ client: connectRedis(), prefix: `${name}:` }),
        queue: createBullmqQueue({ connection: connectRedis(), name, attempts: 1 }),
        onDeadLetter: (letter) => {
          letters.push(letter);
        },
      }).on('leave.approved', async () => {
        runs++;
        throw new Error('our own failure');
      });
      toClose.push(receiver);
      const theirs = new Queue(name, { connection: connectRedis(redisUrl, { maxRetriesPerRequest: null }) });
      toClose.push(theirs);
      const foreign = [
        await theirs.add('resize-image', { url: 'https://example.com/a.png' }, { attempts: 3 }),
        await theirs.add('send-mail', 'not even an object', { attempts: 3 }),
        await theirs.add('event', { event: { id: 42 } }, { attempts: 3 }),
      ];
      const ours = crypto.randomUUID();
      expect((await deliver(receiver, ours)).status).toBe(202);
      await expect.poll(() => letters.length).toBe(1);
      for (const job of foreign) await expect.poll(() => theirs.getJobState(job.id!)).toBe('failed');
      expect(letters[0]!.event.id).toBe(ours);
      expect(runs).toBe(1);
      // Each foreign job failed once, with no retry, and said so at error level, without its data.
      for (const job of foreign) {
        const said = lines.filter((line) => line.level === 'error' && line.fields.jobId === job.id);
        expect(said).toHaveLength(1);
        expect(said[0]!.message).toMatch(/not a workforce-webhooks event/);
        expect(JSON.stringify(said[0]!.fields)).not.toContain('example.com');
        expect((await theirs.getJob(job.id!))?.attemptsMade).toBe(1);
      }
      // The dead letters list only ours, and a replay does not take another app's job for one.
      const page = await receiver.deadLetters();
      expect(page.items.map((letter) => letter.event.id)).toEqual([ours]);
      expect(await receiver.replay(foreign[0]!.id!)).toBe(false);
      expect(await theirs.getJobState(foreign[0]!.id!)).toBe('failed');
    });

    it('logs at error level a running job whose key was deleted by hand: it is neither completed nor retried', async () => {
      const name = uniqueName('deleted');
      const { lines, logger } = recordingLogger();
      const running = gate();
      const release = gate();
      const receiver = createReceiver({
        secret,
        logger,
        store: createRedisStore({ client: connectRedis(), prefix: `${name}:` }),
        queue: createBullmqQueue({ connection: connectRedis(), name }),
      }).on('leave.approved', async () => {
        running.open();
        await release.opened;
      });
      toClose.push(receiver);
      const id = crypto.randomUUID();
      expect((await deliver(receiver, id)).status).toBe(202);
      await running.opened;
      await connectRedis().del(`bull:${name}:${id}`);
      release.open();
      await expect
        .poll(() => lines.find((line) => line.level === 'error' && line.fields.eventId === id)?.message)
        .toMatch(/gone from Redis/);
    });

    it.skipIf(!hasRedisServer())(
      'logs at error level that Redis came back empty, losing the events waiting in it, and serves again',
      async () => {
        const server = await startRedisServer();
        let closeLast: Receiver | undefined;
        try {
          const name = uniqueName('emptied');
          const { lines, logger } = recordingLogger();
          const running = gate();
          const release = gate();
          let runs = 0;
          const receiver = createReceiver({
            secret,
            logger,
            store: createRedisStore({ client: connectRedis(server.url), prefix: `${name}:` }),
            queue: createBullmqQueue({ connection: connectRedis(server.url), name, concurrency: 1 }),
          }).on('leave.approved', async () => {
            runs++;
            running.open();
            await release.opened;
          });
          closeLast = receiver;
          for (let i = 0; i < 3; i++) expect((await deliver(receiver)).status).toBe(202);
          await running.opened;
          // Restarted without persistence: the running job and the two waiting ones are gone.
          await server.stop();
          await server.start();
          await expect
            .poll(
              () => lines.find((line) => line.level === 'error' && /came back empty/.test(line.message)),
              {
                timeout: 20_000,
              },
            )
            .toBeDefined();
          release.open();
          await expect
            .poll(
              () => lines.find((line) => line.level === 'error' && /gone from Redis/.test(line.message)),
              {
                timeout: 20_000,
              },
            )
            .toBeDefined();
          // It serves again with no restart of its own, and says it once, not per reconnect.
          // Answered 503 until the store's and the queue's connections are back, as the sender's retries find.
          const after = crypto.randomUUID();
          await expect
            .poll(async () => (await deliver(receiver, after)).status, { timeout: 20_000, interval: 200 })
            .toBe(202);
          await expect.poll(() => runs, { timeout: 20_000 }).toBe(2);
          expect(lines.filter((line) => /came back empty/.test(line.message))).toHaveLength(1);
        } finally {
          await closeLast?.close({ timeoutMs: 2000 });
          await server.dispose();
        }
      },
      60_000,
    );
  },
);
