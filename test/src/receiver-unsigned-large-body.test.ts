// An unsigned request is parsed to learn whether it is the service's own only when its body is envelope-sized: a
// flood of unsigned bodies up to maxBodyBytes costs no whole JSON parse each, and the service's deliveries whose
// headers a proxy stripped are still recognised by their envelope.
import { describe, expect, it, onTestFinished } from 'vitest';
import { createReceiver } from 'workforce-webhooks';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { isServiceDelivery } from '../../src/envelope.js';
import { recordingLogger } from '../support/logger.js';

const secret = 'whsec_receiver_unsigned_large_body';
const encoder = new TextEncoder();

/** A valid envelope of the service's shape whose `data` carries `padding` bytes. */
async function envelope(padding: number): Promise<Uint8Array> {
  const signed = await createSignedDelivery({ secret, type: 'leave.approved' });
  const event = JSON.parse(signed.body) as { data: Record<string, unknown> };
  event.data.note = 'x'.repeat(padding);
  return encoder.encode(JSON.stringify(event));
}

describe('isServiceDelivery on a body with no service header', () => {
  it('recognises an envelope-sized event body', async () => {
    expect(isServiceDelivery(await envelope(0), {})).toBe(true);
    expect(isServiceDelivery(await envelope(60 * 1024), {})).toBe(true);
  });

  it('does not parse a body far larger than any envelope the service sends, however it is shaped', async () => {
    // A valid envelope: parsed, it would be taken for the service's own; it is not parsed at all.
    expect(isServiceDelivery(await envelope(1024 * 1024 - 1000), {})).toBe(false);
    // Whitespace before the brace is not walked byte by byte either.
    const spaces = new Uint8Array(1024 * 1024).fill(0x20);
    spaces[spaces.length - 1] = 0x7b;
    expect(isServiceDelivery(spaces, {})).toBe(false);
  });

  it('still tells a large body by its headers, which cost nothing to read', async () => {
    const body = await envelope(1024 * 1024 - 1000);
    expect(isServiceDelivery(body, { 'user-agent': 'Svc-Webhooks/1.0' })).toBe(true);
    expect(isServiceDelivery(body, { 'svc-event-id': crypto.randomUUID() })).toBe(true);
  });
});

describe('a receiver sent unsigned bodies', () => {
  it('refuses a flood of large unsigned envelope-shaped bodies 400 and stays quiet; a stripped delivery is still said', async () => {
    const logger = recordingLogger();
    const receiver = createReceiver({ secret, logger });
    onTestFinished(() => receiver.close());
    receiver.on('leave.approved', () => {});
    const large = await envelope(1024 * 1024 - 1000);
    for (let i = 0; i < 5; i++) {
      const answer = await receiver.handle({ method: 'POST', headers: {}, body: large });
      expect({ status: answer.status, body: answer.body }).toEqual({
        status: 400,
        body: JSON.stringify({ error: 'missing_signature' }),
      });
    }
    const warned = () => logger.lines.filter((line) => line.level === 'warn' || line.level === 'error');
    expect(warned()).toEqual([]);
    // The service's delivery, every custom header and the User-Agent stripped: its envelope says whose it is.
    const answer = await receiver.handle({ method: 'POST', headers: {}, body: await envelope(0) });
    expect(answer.status).toBe(400);
    expect(warned()).toHaveLength(1);
    expect(warned()[0]?.msg).toContain('refused 400 missing_signature');
  });
});
