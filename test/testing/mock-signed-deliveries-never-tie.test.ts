// Spec rule 4: a receiver orders a record's events by occurredAt. Deliveries made one after the other with
// createSignedDelivery's default time never tie, so a test's approved-then-cancelled reaches an ordering receiver
// as both, in that order, every time.
import { describe, expect, it } from 'vitest';
import { byDefaultKeys, createReceiver } from 'workforce-webhooks';
import { createSignedDelivery, SAMPLE_IDS, sampleEventData } from 'workforce-webhooks/testing';

const secret = 'whsec_signed_deliveries_never_tie';

describe('createSignedDelivery without occurredAt', () => {
  it('gives a record approved then cancelled at once increasing times, so an ordering receiver runs both', async () => {
    const handled: string[] = [];
    const stale: string[] = [];
    const receiver = createReceiver({
      secret,
      mode: 'inline',
      logger: false,
      ordering: { key: byDefaultKeys() },
      onStale: (event) => {
        stale.push(event.type);
      },
    }).on('leave.*', (event) => {
      handled.push(`${event.data.leaveRequestId} ${event.type}`);
    });
    // Twenty records: with tied times the receiver's order of each pair would be the random order of their ids.
    const expected: string[] = [];
    const ties: number[] = [];
    for (let round = 0; round < 20; round++) {
      const leaveRequestId = `${SAMPLE_IDS.leaveRequestId.slice(0, -2)}${String(round).padStart(2, '0')}`;
      const approvedData = { ...sampleEventData('leave.approved'), leaveRequestId };
      const approved = await createSignedDelivery({ secret, type: 'leave.approved', data: approvedData });
      const cancelled = await createSignedDelivery({
        secret,
        type: 'leave.cancelled',
        data: { ...approvedData, status: 'Abandoned' },
      });
      if (!(Date.parse(cancelled.event.occurredAt) > Date.parse(approved.event.occurredAt))) ties.push(round);
      expect((await receiver.fetch(approved.toRequest('http://127.0.0.1/hooks'))).status).toBe(200);
      expect((await receiver.fetch(cancelled.toRequest('http://127.0.0.1/hooks'))).status).toBe(200);
      expected.push(`${leaveRequestId} leave.approved`, `${leaveRequestId} leave.cancelled`);
    }
    await receiver.close();
    expect({ handled, stale }).toEqual({ handled: expected, stale: [] });
    expect(ties).toEqual([]);
  });

  it('keeps an occurredAt the test gives, so an older event can still be made on purpose', async () => {
    const delivery = await createSignedDelivery({
      secret,
      type: 'leave.approved',
      occurredAt: '2026-06-15T10:00:00.000Z',
    });
    expect(delivery.event.occurredAt).toBe('2026-06-15T10:00:00.000Z');
    expect(JSON.parse(delivery.body).occurredAt).toBe('2026-06-15T10:00:00.000Z');
  });
});
