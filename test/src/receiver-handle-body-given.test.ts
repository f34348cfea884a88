// receiver.handle() called from an app's own route with the body in the shape its framework left it: the text of the
// request is taken as its bytes (as verifySignature takes it), within maxBodyBytes; a parsed object, an ArrayBuffer or
// nothing is answered 500 raw_body_unavailable with the fix logged once, never a false 400 or a 500 internal_error.
import { describe, expect, it, onTestFinished } from 'vitest';
import { createReceiver } from 'workforce-webhooks';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { recordingLogger } from '../support/logger.js';

const secret = 'whsec_receiver_handle_body_given';

function receiverWithRuns(maxBodyBytes?: number) {
  const logger = recordingLogger();
  const receiver = createReceiver({
    secret,
    logger,
    ...(maxBodyBytes === undefined ? {} : { maxBodyBytes }),
  });
  onTestFinished(() => receiver.close());
  const runs: string[] = [];
  receiver.on('leave.approved', (event) => {
    runs.push(event.id);
  });
  return { receiver, logger, runs };
}

describe('receiver.handle given the body as its host had it', () => {
  it('takes the request read as text as its bytes: the event runs, and its copy is a duplicate', async () => {
    const { receiver, logger, runs } = receiverWithRuns();
    // Text beyond ASCII: its UTF-8 bytes are what was signed.
    const delivery = await createSignedDelivery({
      secret,
      type: 'leave.approved',
      data: { note: 'Zoë – café ☕' } as never,
    });
    expect(delivery.body).toContain('Zoë – café ☕');
    const first = await receiver.handle({ method: 'POST', headers: delivery.headers, body: delivery.body });
    expect([first.status, first.body]).toEqual([202, '{"received":true}']);
    await expect.poll(() => runs).toEqual([delivery.event.id]);
    const copy = await receiver.handle({ method: 'POST', headers: delivery.headers, body: delivery.body });
    expect([copy.status, copy.body]).toEqual([200, '{"received":true,"duplicate":true}']);
    expect(logger.lines.filter((line) => line.level !== 'debug' && line.level !== 'info')).toEqual([]);
  });

  it('answers 413 for text whose bytes pass maxBodyBytes', async () => {
    const { receiver, runs } = receiverWithRuns(64);
    const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
    expect(new TextEncoder().encode(delivery.body).byteLength).toBeGreaterThan(64);
    const answer = await receiver.handle({ method: 'POST', headers: delivery.headers, body: delivery.body });
    expect([answer.status, answer.body]).toEqual([413, '{"error":"payload_too_large"}']);
    expect(runs).toEqual([]);
  });

  it('answers a parsed object, an ArrayBuffer or null 500 raw_body_unavailable, the fix logged once', async () => {
    const { receiver, logger, runs } = receiverWithRuns();
    const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
    const bytes = new TextEncoder().encode(delivery.body);
    for (const body of [JSON.parse(delivery.body), bytes.buffer, null]) {
      const answer = await receiver.handle({
        method: 'POST',
        headers: delivery.headers,
        body: body as never,
      });
      expect([answer.status, answer.body]).toEqual([500, '{"error":"raw_body_unavailable"}']);
    }
    const said = logger.lines.filter((line) => line.level === 'warn' || line.level === 'error');
    expect(said).toHaveLength(1);
    expect(said[0]!.level).toBe('error');
    expect(said[0]!.msg).toContain('the raw request body is not available');
    expect(said[0]!.msg).toContain('pass the raw request bytes as `body`');
    expect(said[0]!.msg).toContain('got an object (a parsed body?)');
    // Nothing of the body in the line.
    expect(JSON.stringify(said)).not.toContain(delivery.event.id);
    // The sender's retry with the bytes is taken: nothing was claimed meanwhile.
    const retried = await receiver.handle({ method: 'POST', headers: delivery.headers, body: bytes });
    expect(retried.status).toBe(202);
    await expect.poll(() => runs).toEqual([delivery.event.id]);
  });
});
