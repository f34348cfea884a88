// Dead letters typed by the receiver's event map: `letter.event` narrows by its `type` as on()'s handlers' events do,
// replay() takes the letter as read, and a filter's `type` is checked against the map (a string known only at run
// time passes, checked when the filter is read).
import { describe, expect, expectTypeOf, it, onTestFinished } from 'vitest';
import {
  createMemoryQueue,
  createReceiver,
  type DeadLetter,
  type EventDataMap,
  type EventName,
  type EventOf,
  type LeaveApprovedData,
  type Receiver,
  unknownType,
  type WorkforceEvent,
} from 'workforce-webhooks';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { recordingLogger } from '../support/logger.js';

const secret = 'whsec_types_dead_letters';

// A map of the app's own whose payload is an interface: not a `Record<string, unknown>`, so its events are not a
// queue's `WorkforceEvent`.
interface Paid {
  readonly payrollId: string;
}
interface Mine {
  'custom.paid': Paid;
  'custom.reversed': { readonly reason: string };
}

// Read by the compiler only: calls that must compile, or must not, never run.
const compiles = (_calls: () => unknown): void => {};

// A receiver whose every handler fails, each event given one attempt: each delivery becomes a dead letter.
function failing<M>(receiver: Receiver<M>): Receiver<M> {
  onTestFinished(() => receiver.close());
  receiver.onAny(() => {
    throw new Error('calendar down');
  });
  return receiver;
}

const options = () => ({ secret, queue: createMemoryQueue({ attempts: 1 }), logger: recordingLogger() });

// Delivers one event and waits for its dead letter.
async function deadLetterOf<M>(
  receiver: Receiver<M>,
  { body, headers }: { readonly body: string; readonly headers: Readonly<Record<string, string>> },
): Promise<void> {
  const answer = await receiver.handle({ method: 'POST', headers, body: new TextEncoder().encode(body) });
  expect(answer.status).toBe(202);
  await expect.poll(async () => (await receiver.deadLetters()).items).toHaveLength(1);
}

describe("a receiver's dead letters", () => {
  it("hold the map's events, narrowed by event.type to the type's payload", async () => {
    const receiver = failing(createReceiver(options()));
    const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
    await deadLetterOf(receiver, delivery);
    const [letter] = (await receiver.deadLetters({ type: 'leave.approved' })).items;
    expectTypeOf(letter!.event).toEqualTypeOf<EventOf<EventDataMap, EventName<EventDataMap>>>();
    const { event } = letter!;
    if (event.type !== 'leave.approved') throw new Error(`a leave.approved letter, not ${event.type}`);
    expectTypeOf(event.data).toEqualTypeOf<LeaveApprovedData>();
    expect(event.data.employeeId).toBe(delivery.event.data.employeeId);
    // The letter as read is what replay() takes.
    expect(await receiver.replay(letter!)).toBe(true);
  });

  it("of a map of the app's own, whose payloads are interfaces, are typed by it and replayed as read", async () => {
    const receiver = failing(createReceiver<Mine>(options()));
    const delivery = await createSignedDelivery({ secret, type: 'custom.paid', data: { payrollId: 'p-1' } });
    await deadLetterOf(receiver, delivery);
    const letters: readonly DeadLetter<EventOf<Mine, EventName<Mine>>>[] = (await receiver.deadLetters())
      .items;
    const { event } = letters[0]!;
    expectTypeOf(event).toEqualTypeOf<
      WorkforceEvent<'custom.paid', Paid> | WorkforceEvent<'custom.reversed', { readonly reason: string }>
    >();
    expect(event.type === 'custom.paid' && event.data.payrollId).toBe('p-1');
    expect(await receiver.replay(letters[0]!)).toBe(true);
    compiles(() => {
      // A queue's letter (as `onDeadLetter` gets it) is taken too: replay reads only its event id and failure time.
      const queued: DeadLetter = letters[0]! as unknown as DeadLetter;
      expectTypeOf(queued.event).toEqualTypeOf<WorkforceEvent>();
      return receiver.replay(queued);
    });
  });
});

describe("a receiver's dead-letter filters", () => {
  it("take the map's types, their prefix.* patterns, unknownType and a string known at run time", async () => {
    const receiver = failing(createReceiver(options()));
    await deadLetterOf(receiver, await createSignedDelivery({ secret, type: 'leave.approved' }));
    expect((await receiver.deadLetters({ type: 'leave.approved', limit: 50 })).items).toHaveLength(1);
    expect(
      (await receiver.deadLetters({ type: 'leave.*', since: '2026-11-23T00:00:00Z' })).items,
    ).toHaveLength(1);
    expect(await receiver.discardDeadLetters({ type: unknownType('benefits.enrolled') })).toBe(0);
    // An operator's input, as an admin route reads it: checked when the filter is read, not by the compiler.
    const typeFromRequest: string = new URLSearchParams('type=leave.*').get('type')!;
    expect(await receiver.replayDeadLetters({ type: typeFromRequest })).toMatchObject({ replayed: 1 });
    compiles(() => createReceiver<Mine>({ secret }).deadLetters({ type: 'custom.*' }));
  });

  it('refuse a type the map does not name, a prefix of none of its types, and the catch-all', async () => {
    const receiver = failing(createReceiver(options()));
    await deadLetterOf(receiver, await createSignedDelivery({ secret, type: 'leave.approved' }));
    // Past the compiler, a misspelt type is a filter that matches no letter, and says nothing.
    expect((await receiver.deadLetters({ type: 'leave.aproved' as string })).items).toEqual([]);
    compiles(() => {
      // @ts-expect-error a typo of leave.approved
      void receiver.deadLetters({ type: 'leave.aproved' });
      // @ts-expect-error a typo of leave.rejected
      void receiver.replayDeadLetters({ type: 'leave.rejectd' });
      // @ts-expect-error no type of the map starts with `benefits.`
      void receiver.discardDeadLetters({ type: 'benefits.*' });
      // @ts-expect-error '*' is no filter (refused when read): leave `type` out for every type
      void receiver.deadLetters({ type: '*' });
      // @ts-expect-error the map given replaces EventDataMap: leave.approved is not one of its types
      void createReceiver<Mine>({ secret }).deadLetters({ type: 'leave.approved' });
    });
  });
});
