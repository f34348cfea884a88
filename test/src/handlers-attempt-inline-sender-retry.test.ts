// ctx.attempt in inline mode: each retry of the sender is a new delivery, whose run is attempt 1 again.
import { describe, expect, it } from 'vitest';
import { createReceiver, silentLogger } from 'workforce-webhooks';
import { createSignedDelivery } from 'workforce-webhooks/testing';

const secret = 'whsec_handlers_attempt_inline_sender_retry';
const encoder = new TextEncoder();

describe('ctx.attempt in inline mode', () => {
  it("starts at 1 on each of the sender's retries, told apart by their deliveryId", async () => {
    const receiver = createReceiver({ secret, logger: silentLogger, mode: 'inline' });
    const runs: Array<{ attempt: number; deliveryId: string | undefined }> = [];
    receiver.on('leave.approved', (_event, ctx) => {
      runs.push({ attempt: ctx.attempt, deliveryId: ctx.deliveryId });
      if (runs.length < 3) throw new Error('down');
    });
    const signed = await createSignedDelivery({ secret, type: 'leave.approved' });
    const body = encoder.encode(signed.body);
    const statuses: number[] = [];
    for (const deliveryId of ['d-1', 'd-2', 'd-3']) {
      const headers = { ...signed.headers, 'svc-delivery-id': deliveryId };
      statuses.push((await receiver.handle({ method: 'POST', headers, body })).status);
    }
    await receiver.close();
    expect(statuses).toEqual([500, 500, 200]);
    expect(runs).toEqual([
      { attempt: 1, deliveryId: 'd-1' },
      { attempt: 1, deliveryId: 'd-2' },
      { attempt: 1, deliveryId: 'd-3' },
    ]);
  });
});
