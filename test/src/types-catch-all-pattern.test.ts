// `on('*')` is the registry's catch-all: it compiles, and its handler is typed as any event, never as the text '*'.
import { describe, expect, expectTypeOf, it, onTestFinished } from 'vitest';
import {
  createReceiver,
  type EventDataMap,
  type TypesOf,
  type UnknownEventData,
  unknownType,
  type WorkforceEvent,
} from 'workforce-webhooks';
import { createSignedDelivery } from 'workforce-webhooks/testing';

const secret = 'whsec_types_catch_all';

describe("on('*')", () => {
  it('compiles, and its handler gets any event: a string type and loose data, as onAny', () => {
    const receiver = createReceiver({ secret });
    receiver.on('*', (event) => {
      expectTypeOf(event).toEqualTypeOf<WorkforceEvent<string, UnknownEventData>>();
    });
    receiver.on(['*', 'leave.approved'], (event) => {
      expectTypeOf(event.type).toEqualTypeOf<string>();
    });
    expectTypeOf<TypesOf<EventDataMap, '*'>>().toEqualTypeOf<string>();
  });

  it("through unknownType('*') types the event as any event, not one whose type is '*'", () => {
    createReceiver({ secret }).on(unknownType('*'), (event) => {
      expectTypeOf(event.type).toEqualTypeOf<string>();
      expectTypeOf(event.data).toEqualTypeOf<UnknownEventData>();
    });
  });

  it('runs for every event, of the map or not, with its own type', async () => {
    const receiver = createReceiver({ secret, mode: 'inline' });
    onTestFinished(() => receiver.close());
    const seen: string[] = [];
    receiver.on('*', (event) => {
      seen.push(event.type);
    });
    for (const type of ['leave.approved', 'benefits.enrolled']) {
      const delivery = await createSignedDelivery({ secret, type });
      const answer = await receiver.handle({ headers: delivery.headers, body: delivery.body });
      expect(answer.status, type).toBe(200);
    }
    expect(seen).toEqual(['leave.approved', 'benefits.enrolled']);
  });
});
