// Another app's job on this queue whose data looks like an event at a glance (an `event` with an id and a type, no
// more): failed at once, never handed to the handlers (which would read an event without `data`) or onDeadLetter.
import { Queue } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryStore, createReceiver, type DeadLetter, type Receiver } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';
import { recordingLogger } from '../support/logger.js';

const secret = 'whsec_bullmq_foreign_event_shaped';
const encoder = new TextEncoder();
const toClose: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const each of toClose.splice(0).reverse()) await each.close();
});

async function deliver(receiver: Receiver, id: string) {
  const delivery = await createSignedDelivery({ secret, type: 'leave.approved', id });
  return receiver.handle({ method: 'POST', headers: delivery.headers, body: encoder.encode(delivery.body) });
}

describe.skipIf(!redisUrl)('another app’s event-shaped job on the queue', () => {
  it('is failed at once with an error line, and never reaches a handler, onDeadLetter or the dead letters', async () => {
    const name = uniqueName('foreign-shaped');
    const logger = recordingLogger();
    const { lines } = logger;
    const letters: DeadLetter[] = [];
    const seen: unknown[] = [];
    const receiver = createReceiver({
      secret,
      logger,
      store: createMemoryStore(),
      queue: createBullmqQueue({ connection: connectRedis(), name, attempts: 1 }),
      onDeadLetter: (letter) => {
        letters.push(letter);
      },
    }).on('leave.approved', (event) => {
      seen.push(event.data);
      if (typeof event.data !== 'object' || event.data === null) throw new Error('an event without data');
    });
    toClose.push({ close: () => receiver.close({ timeoutMs: 2000 }) });
    const theirs = new Queue(name, { connection: connectRedis(redisUrl, { maxRetriesPerRequest: null }) });
    toClose.push(theirs);
    const foreign = [
      await theirs.add('event', { event: { id: 'order-1', type: 'leave.approved' } }, { attempts: 3 }),
      await theirs.add(
        'event',
        { event: { id: 'order-2', type: 'leave.approved', data: null } },
        { attempts: 3 },
      ),
    ];
    for (const job of foreign) await expect.poll(() => theirs.getJobState(job.id!)).toBe('failed');
    // One event of ours after them: it runs, so the foreign ones were looked at before.
    const ours = crypto.randomUUID();
    expect((await deliver(receiver, ours)).status).toBe(202);
    await expect.poll(() => seen.length).toBe(1);
    expect(seen[0]).toEqual(expect.any(Object));
    expect(letters).toEqual([]);
    for (const job of foreign) {
      expect((await theirs.getJob(job.id!))?.attemptsMade).toBe(1);
      const said = lines.filter((line) => line.level === 'error' && line.obj.jobId === job.id);
      expect(said.map((line) => line.msg)).toEqual([expect.stringMatching(/not a workforce-webhooks event/)]);
    }
    expect((await receiver.deadLetters()).items).toEqual([]);
  });
});
