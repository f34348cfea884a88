// One handler function registered under overlapping patterns runs once per event, as one on([...], h) does; two
// different functions on the same type each run.
import { describe, expect, it } from 'vitest';
import { createReceiver, type Receiver } from 'workforce-webhooks';
import { createSignedDelivery } from 'workforce-webhooks/testing';

const secret = 'whsec_handlers_registered_twice';

const deliver = async (configure: (receiver: Receiver) => void) => {
  const receiver = createReceiver({ secret, mode: 'inline', logger: false });
  configure(receiver);
  const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
  const answer = await receiver.handle({
    method: 'POST',
    headers: delivery.headers,
    body: new TextEncoder().encode(delivery.body),
  });
  await receiver.close();
  return answer.status;
};

describe('a handler registered under overlapping patterns', () => {
  it('runs once when the same function is given an exact type, then its wildcard, then the catch-all', async () => {
    let runs = 0;
    const handler = () => {
      runs += 1;
    };
    const status = await deliver((receiver) => {
      receiver.on('leave.approved', handler);
      receiver.on('leave.*', handler);
      receiver.on(['leave.approved', 'leave.*'], handler);
      receiver.onAny(handler);
    });
    expect(status).toBe(200);
    expect(runs).toBe(1);
  });

  it('runs each of two different functions on the same type', async () => {
    const ran: string[] = [];
    const status = await deliver((receiver) => {
      receiver.on('leave.approved', () => void ran.push('first'));
      receiver.on('leave.*', () => void ran.push('second'));
    });
    expect(status).toBe(200);
    expect(ran.sort()).toEqual(['first', 'second']);
  });
});
