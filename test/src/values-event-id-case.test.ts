// An event id is a uuid: written in uppercase or lowercase, it names one event, run once (spec rule 3).
import { describe, expect, it } from 'vitest';
import { createReceiver } from 'workforce-webhooks';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { until } from '../support/ordering-scenario.js';

const secret = 'whsec_values_event_id_case';
const encoder = new TextEncoder();

const delivery = async (id: string, headerId = id) => {
  const signed = await createSignedDelivery({ secret, type: 'leave.approved', id });
  return {
    method: 'POST',
    headers: { ...signed.headers, 'svc-event-id': headerId },
    body: encoder.encode(signed.body),
  };
};

describe('event ids in either case', () => {
  it('runs an event once when its copies write its id in uppercase and in lowercase', async () => {
    const receiver = createReceiver({ secret });
    const ran: string[] = [];
    receiver.on('leave.approved', (event) => void ran.push(event.id));
    const id = crypto.randomUUID();
    const upper = await receiver.handle(await delivery(id.toUpperCase()));
    expect(upper.status).toBe(202);
    await upper.background;
    await until(() => ran.length === 1, 'the first copy');
    const lower = await receiver.handle(await delivery(id));
    expect(JSON.parse(lower.body)).toEqual({ received: true, duplicate: true });
    const mixed = await receiver.handle(await delivery(`${id.slice(0, 18).toUpperCase()}${id.slice(18)}`));
    expect(JSON.parse(mixed.body)).toEqual({ received: true, duplicate: true });
    await receiver.close();
    // Handlers see the id as uuids are written: lowercase.
    expect(ran).toEqual([id]);
  });

  it('takes an Svc-Event-Id header that writes the body id in another case', async () => {
    const receiver = createReceiver({ secret });
    receiver.on('leave.approved', () => {});
    const id = crypto.randomUUID();
    expect((await receiver.handle(await delivery(id.toUpperCase(), id))).status).toBe(202);
    expect((await receiver.handle(await delivery(crypto.randomUUID(), id.toUpperCase()))).status).toBe(400);
    await receiver.close();
  });
});
