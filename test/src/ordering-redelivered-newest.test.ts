// The newest handled event of a record delivered again once the store forgot its id (the memory store keeps the last
// `max` done ids and, apart, the last `max` watermarks): it is the record's watermark itself, not older than it, so it
// is neither answered stale nor reported to onStale as skipped for a newer event; it is not run again either.
import { describe, expect, it, onTestFinished } from 'vitest';
import { createMemoryStore, createReceiver } from 'workforce-webhooks';
import { recordingLogger } from '../support/logger.js';
import { signedLeave, until } from '../support/ordering-scenario.js';

const secret = 'whsec_ordering_redelivered_newest';

describe('the newest handled event of a record, delivered again after its id was forgotten', () => {
  it('is not answered stale nor reported to onStale, and does not run again', async () => {
    const logger = recordingLogger();
    const stale: { event: string; newer: string }[] = [];
    const receiver = createReceiver({
      secret,
      // Two done ids and two watermarks remembered.
      store: createMemoryStore({ max: 2 }),
      logger,
      ordering: {},
      onStale: (event, newer) => void stale.push({ event: event.id, newer: newer.id }),
    });
    onTestFinished(() => receiver.close());
    const ran: string[] = [];
    receiver.on('leave.*', (event) => void ran.push(event.id));
    const record = crypto.randomUUID();
    const other = crypto.randomUUID();
    const newest = await signedLeave(secret, 'leave.approved', 1, record);
    expect((await receiver.handle(newest)).status).toBe(202);
    await until(() => ran.length === 1, 'the newest event');
    // Two events of another record push the newest event's id out of the done ids; its record's watermark stays.
    for (const second of [1, 2]) {
      expect((await receiver.handle(await signedLeave(secret, 'leave.approved', second, other))).status).toBe(
        202,
      );
    }
    await until(() => ran.length === 3, 'the other record');
    const again = await receiver.handle(newest);
    expect(again.body).not.toContain('stale');
    expect(again.status).toBe(202);
    await receiver.close();
    expect(stale).toEqual([]);
    expect(ran).toEqual([newest.event.id, expect.any(String), expect.any(String)]);
    expect(logger.lines.filter((line) => line.msg?.includes('stale event skipped'))).toEqual([]);
  });
});
