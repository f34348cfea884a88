// A bulk replay of 10 000 dead letters into a memory queue near its maxQueued while deliveries keep arriving: every
// letter ends replayed or still a dead letter, counted in the result, and every delivery answered 202 is processed.
import { describe, expect, it, onTestFinished } from 'vitest';
import { createMemoryQueue, createReceiver, type EventQueue, silentLogger } from 'workforce-webhooks';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { queuedEvent } from '../contract/queue-suite.js';

const secret = 'whsec_replay_bulk_near_max_queued';
const LETTERS = 10_000;

// Dead letters made the way an inline run hands over its last failed attempt: at once, past maxQueued.
async function bury(queue: EventQueue, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const job = queuedEvent({ attemptsMade: 1 });
    ids.push(job.event.id);
    await queue.enqueue(job, new Error('calendar down'));
  }
  await expect.poll(async () => (await queue.counts?.())?.deadLetters).toBe(count);
  return ids;
}

async function allLetters(queue: EventQueue): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await queue.deadLetters({ limit: 1000, cursor });
    ids.push(...page.items.map((letter) => letter.event.id));
    cursor = page.cursor;
  } while (cursor !== undefined);
  return ids;
}

describe('a bulk replay of 10 000 dead letters into a queue near its maxQueued, deliveries arriving', () => {
  it('leaves each letter that does not fit a dead letter, counted failed, and loses no letter or delivery', {
    timeout: 120_000,
  }, async () => {
    const queue = createMemoryQueue({ concurrency: 5, maxQueued: 100, attempts: 1, maxDeadLetters: 20_000 });
    const receiver = createReceiver({ secret, queue, logger: silentLogger });
    onTestFinished(() => receiver.close({ timeoutMs: 5000 }));
    const ran: string[] = [];
    let open!: () => void;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    receiver.on('leave.approved', async (event) => {
      ran.push(event.id);
      await gate;
    });
    const letters = await bury(queue, LETTERS);
    const deliver = async (): Promise<{ id: string; status: number }> => {
      const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
      const answer = await receiver.handle({
        method: 'POST',
        headers: delivery.headers,
        body: new TextEncoder().encode(delivery.body),
      });
      return { id: delivery.event.id, status: answer.status };
    };
    // The queue near its bound: 95 of its 100 places taken by deliveries whose handlers wait.
    const before = await Promise.all(Array.from({ length: 95 }, deliver));
    expect(before.every((each) => each.status === 202)).toBe(true);
    // The replay, with deliveries arriving at the same time.
    const [result, during] = await Promise.all([
      receiver.replayDeadLetters({}),
      Promise.all(Array.from({ length: 20 }, deliver)),
    ]);
    open();
    const delivered = [...before, ...during];
    await expect.poll(async () => (await queue.counts?.())?.depth, { timeout: 60_000 }).toBe(0);
    const kept = await allLetters(queue);
    const accepted = delivered.filter((each) => each.status === 202).map((each) => each.id);
    const replayedRuns = ran.filter((id) => !accepted.includes(id));
    expect({
      handled: result.replayed + result.failed,
      // The replay did reach the queue's bound: some letters did not fit.
      someFailed: result.failed > 0,
      kept: kept.length,
      runs: replayedRuns.length,
      // Every letter either ran once or is still kept, never both, never neither.
      everyLetter: [...new Set([...replayedRuns, ...kept])].sort(),
      deliveriesAnswered: delivered.every((each) => each.status === 202 || each.status === 503),
      acceptedRan: accepted.filter((id) => ran.includes(id)),
    }).toEqual({
      handled: LETTERS,
      someFailed: true,
      kept: result.failed,
      runs: result.replayed,
      everyLetter: [...letters].sort(),
      deliveriesAnswered: true,
      acceptedRan: accepted,
    });
  });
});
