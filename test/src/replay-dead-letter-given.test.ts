// receiver.replay() takes a dead letter as deadLetters() read it, as well as its event id: given the letter, the event
// runs again (only that failure of it), and given anything else the call says so instead of answering false.
import { describe, expect, it, onTestFinished } from 'vitest';
import { ConfigurationError, createMemoryQueue, createReceiver, type Receiver } from 'workforce-webhooks';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { recordingLogger } from '../support/logger.js';

const secret = 'whsec_replay_dead_letter_given';

// A receiver whose leave.approved handler fails while `failing.on`, each event given one attempt.
function failingReceiver(): { receiver: Receiver; failing: { on: boolean }; runs: string[] } {
  const receiver = createReceiver({
    secret,
    queue: createMemoryQueue({ attempts: 1 }),
    logger: recordingLogger(),
  });
  onTestFinished(() => receiver.close());
  const failing = { on: true };
  const runs: string[] = [];
  receiver.on('leave.approved', (event) => {
    runs.push(event.id);
    if (failing.on) throw new Error('calendar down');
  });
  return { receiver, failing, runs };
}

async function deadLetterOf(receiver: Receiver): Promise<string> {
  const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
  const answer = await receiver.handle({
    method: 'POST',
    headers: delivery.headers,
    body: new TextEncoder().encode(delivery.body),
  });
  expect(answer.status).toBe(202);
  await expect
    .poll(async () => (await receiver.deadLetters()).items.map((l) => l.event.id))
    .toContain(delivery.event.id);
  return delivery.event.id;
}

describe('receiver.replay given a dead letter', () => {
  it('runs the letter read by deadLetters() again, once, and leaves no letter behind', async () => {
    const { receiver, failing, runs } = failingReceiver();
    const id = await deadLetterOf(receiver);
    failing.on = false;
    const [letter] = (await receiver.deadLetters()).items;
    expect(await receiver.replay(letter!)).toBe(true);
    await expect.poll(() => runs.filter((run) => run === id)).toHaveLength(2);
    expect((await receiver.deadLetters()).items).toEqual([]);
    // The same letter again: it was replayed, there is none left.
    expect(await receiver.replay(letter!)).toBe(false);
  });

  it('answers false for a letter read before the event was replayed and failed again, and leaves the newer one', async () => {
    const { receiver, runs } = failingReceiver();
    const id = await deadLetterOf(receiver);
    const [first] = (await receiver.deadLetters()).items;
    // The next failure is in a later millisecond, so the two letters' failure times differ.
    await expect.poll(() => Date.now() > first!.failedAt).toBe(true);
    // Replayed by id, it fails again: a newer letter, with a later failure time.
    expect(await receiver.replay(id)).toBe(true);
    await expect.poll(() => runs.filter((run) => run === id)).toHaveLength(2);
    await expect.poll(async () => (await receiver.deadLetters()).items.map((l) => l.event.id)).toEqual([id]);
    const [second] = (await receiver.deadLetters()).items;
    expect(second!.failedAt).toBeGreaterThan(first!.failedAt);
    expect(await receiver.replay(first!)).toBe(false);
    expect((await receiver.deadLetters()).items.map((l) => l.event.id)).toEqual([id]);
    expect(await receiver.replay(second!)).toBe(true);
  });

  it('rejects what is neither a dead letter nor an event id with the call to write, leaving the letter kept', async () => {
    const { receiver } = failingReceiver();
    const id = await deadLetterOf(receiver);
    for (const wrong of [undefined, null, 42, { id }, { event: { id } }, [id]]) {
      const refusal = await receiver.replay(wrong as never).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refusal).toBeInstanceOf(ConfigurationError);
      expect((refusal as Error).message).toMatch(
        /^workforce-webhooks: replay takes a dead letter or its event id/,
      );
      expect((refusal as Error).message).toContain('receiver.replay(letter.event.id)');
    }
    expect((await receiver.deadLetters()).items.map((l) => l.event.id)).toEqual([id]);
  });
});
