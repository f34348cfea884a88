// receiver.replay given the platform of the request it is called from: the replayed event's run is handed to its
// waitUntil, whether the letter is named by its event id or given as deadLetters() read it.
import { describe, expect, expectTypeOf, it, onTestFinished } from 'vitest';
import { createMemoryQueue, createReceiver, type Receiver, silentLogger } from 'workforce-webhooks';
import { createSignedDelivery } from 'workforce-webhooks/testing';

const secret = 'whsec_replay_receiver_platform';

// A receiver whose leave.approved handler fails while `failing.on`, holding one dead letter.
async function receiverWithLetter(): Promise<{
  receiver: Receiver;
  failing: { on: boolean };
  runs: string[];
}> {
  const failing = { on: true };
  const runs: string[] = [];
  const receiver = createReceiver({
    secret,
    logger: silentLogger,
    queue: createMemoryQueue({ attempts: 1 }),
  });
  onTestFinished(() => receiver.close({ timeoutMs: 1000 }));
  receiver.on('leave.approved', async (event) => {
    runs.push(event.id);
    await new Promise((resolve) => setTimeout(resolve, 5));
    if (failing.on) throw new Error('down');
  });
  const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
  expect((await receiver.handle({ body: delivery.body, headers: delivery.headers })).status).toBe(202);
  await expect.poll(async () => (await receiver.deadLetters()).items.length).toBe(1);
  runs.length = 0;
  failing.on = false;
  return { receiver, failing, runs };
}

describe('receiver.replay with the platform of its request', () => {
  for (const by of ['letter', 'event id'] as const)
    it(`hands the replayed run to its waitUntil, given the ${by}`, async () => {
      const { receiver, runs } = await receiverWithLetter();
      const [letter] = (await receiver.deadLetters()).items;
      const handed: Promise<unknown>[] = [];
      const platform = { waitUntil: (work: Promise<unknown>) => void handed.push(work) };
      const given = by === 'letter' ? letter! : letter!.event.id;
      expect(await receiver.replay(given, { platform })).toBe(true);
      expect(handed).toHaveLength(1);
      await handed[0];
      // Settled only once the handler ran: nothing of the event is left to run after the request's end.
      expect(runs).toEqual([letter!.event.id]);
      expect((await receiver.deadLetters()).items).toEqual([]);
    });

  it('is the type `ReturnType<typeof createReceiver>` names, so a receiver made without a map fits it', () => {
    expectTypeOf(createReceiver({ secret })).toEqualTypeOf<ReturnType<typeof createReceiver>>();
    expectTypeOf<ReturnType<typeof createReceiver>>().toEqualTypeOf<Receiver>();
  });
});
