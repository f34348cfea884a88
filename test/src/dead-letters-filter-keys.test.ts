// Dead-letter reads and bulk calls given a filter they cannot honour (from JavaScript): refused, every letter kept.
import { describe, expect, it } from 'vitest';
import {
  ConfigurationError,
  createMemoryQueue,
  createReceiver,
  type DeadLetterFilter,
  type Receiver,
  silentLogger,
} from 'workforce-webhooks';
import { createSignedDelivery } from 'workforce-webhooks/testing';

const secret = 'whsec_dead_letters_filter_keys';
const encoder = new TextEncoder();

async function delivery(type: string) {
  const signed = await createSignedDelivery({ secret, type } as never);
  return { method: 'POST', headers: signed.headers, body: encoder.encode(signed.body) };
}

// A receiver holding two dead letters (leave.approved, leave.rejected); `runs` counts handler runs.
async function receiverWithLetters(): Promise<{ receiver: Receiver; runs: () => number; ids: string[] }> {
  let runs = 0;
  const receiver = createReceiver({
    secret,
    logger: silentLogger,
    queue: createMemoryQueue({ attempts: 1 }),
  });
  receiver.on('leave.*', () => {
    runs++;
    throw new Error('down');
  });
  for (const type of ['leave.approved', 'leave.rejected'])
    expect((await receiver.handle(await delivery(type))).status).toBe(202);
  await expect.poll(async () => (await receiver.deadLetters()).items.length).toBe(2);
  const ids = (await receiver.deadLetters()).items.map((letter) => letter.event.id);
  return { receiver, runs: () => runs, ids };
}

const kept = async (receiver: Receiver): Promise<number> => (await receiver.deadLetters()).items.length;

describe('a bulk replay or discard given a key it does not filter by', () => {
  it('discardDeadLetters({ eventId }) is refused and drops no letter, not every one', async () => {
    const { receiver, ids } = await receiverWithLetters();
    const filter = { eventId: ids[0] } as DeadLetterFilter;
    await expect(receiver.discardDeadLetters(filter)).rejects.toThrow(ConfigurationError);
    await expect(receiver.discardDeadLetters(filter)).rejects.toThrow(/not eventId.*discard\(eventId\)/);
    expect(await kept(receiver)).toBe(2);
    await receiver.close();
  });

  it("a read's limit or cursor is refused: a discard acts on every match, never on a page of them", async () => {
    const { receiver } = await receiverWithLetters();
    for (const filter of [{ limit: 1 }, { type: 'leave.*', cursor: '1' }] as unknown as DeadLetterFilter[])
      await expect(receiver.discardDeadLetters(filter)).rejects.toThrow(ConfigurationError);
    expect(await kept(receiver)).toBe(2);
    await receiver.close();
  });

  it('replayDeadLetters({ types }) is refused and runs no letter again', async () => {
    const { receiver, runs } = await receiverWithLetters();
    const before = runs();
    await expect(receiver.replayDeadLetters({ types: 'leave.approved' } as DeadLetterFilter)).rejects.toThrow(
      /replayDeadLetters filters by type, since, until only, not types/,
    );
    expect(runs()).toBe(before);
    expect(await kept(receiver)).toBe(2);
    await receiver.close();
  });

  it('takes its own keys, one set to undefined among them, as before', async () => {
    const { receiver } = await receiverWithLetters();
    const filter = { type: 'leave.approved', since: undefined } as DeadLetterFilter;
    expect(await receiver.discardDeadLetters(filter)).toBe(1);
    expect(await kept(receiver)).toBe(1);
    await receiver.close();
  });
});

describe('a dead-letter read given a key that is no part of a query', () => {
  it('is refused with a ConfigurationError naming the key, rather than answering every letter', async () => {
    const { receiver } = await receiverWithLetters();
    await expect(receiver.deadLetters({ types: 'leave.rejected' } as never)).rejects.toThrow(/not types/);
    await expect(receiver.deadLetters({ type: 'leave.rejected', limit: 5 })).resolves.toMatchObject({
      items: [{ event: { type: 'leave.rejected' } }],
    });
    await receiver.close();
  });
});

describe('a dead-letter type filter with a `*` that is not a final `.*`', () => {
  it.each(['*', 'leave*', '*.approved', '.*', 'leave.*.approved'])(
    'refuses %j for a read and a discard, dropping nothing, rather than matching no letter',
    async (type) => {
      const { receiver } = await receiverWithLetters();
      await expect(receiver.deadLetters({ type })).rejects.toThrow(/leave it out for every type/);
      await expect(receiver.discardDeadLetters({ type })).rejects.toThrow(ConfigurationError);
      expect(await kept(receiver)).toBe(2);
      expect((await receiver.deadLetters({ type: 'leave.*' })).items).toHaveLength(2);
      await receiver.close();
    },
  );
});
