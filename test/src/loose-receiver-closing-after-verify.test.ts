// On Web Crypto (Workers, Deno, Bun) the signature check answers later: a delivery that came before close() began
// and whose check ends after it is answered 503 shutting_down, and sends nothing to the store (its client may close).
import { describe, expect, it } from 'vitest';
import { createMemoryStore, createReceiver } from 'workforce-webhooks';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { recordingLogger } from '../support/logger.js';

const secret = 'whsec_loose_closing_after_verify';

// On node:crypto the check answers at once, so the claim is sent before close() can begin: nothing to race.
describe.skipIf(process.env.WFWH_CRYPTO !== 'web')(
  'a delivery whose signature check ends once close() began',
  () => {
    it('is answered 503 shutting_down, claims nothing and runs nothing, so the service sends it again', async () => {
      const logger = recordingLogger();
      const store = createMemoryStore();
      const ran: string[] = [];
      const receiver = createReceiver({ secret, logger, store }).on('leave.approved', (event) => {
        ran.push(event.id);
      });
      const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
      // Past the receiver's closing check, its signature still being checked.
      const answering = receiver.handle({ method: 'POST', headers: delivery.headers, body: delivery.body });
      await receiver.close();
      const answer = await answering;

      expect({ status: answer.status, body: answer.body }).toEqual({
        status: 503,
        body: JSON.stringify({ error: 'shutting_down' }),
      });
      expect(ran).toEqual([]);
      expect(logger.lines.filter((line) => line.level !== 'debug')).toEqual([]);
      // Nothing of it was stored: its redelivery is claimed afresh.
      expect((await store.claim(delivery.event.id, 30_000)).status).toBe('claimed');
    });
  },
);
