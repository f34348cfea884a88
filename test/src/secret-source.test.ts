// The `secret` option: a value, a rotation list, or a function read at each delivery; missing means 500 not_configured.
import { describe, expect, it } from 'vitest';
import { answers, createReceiver, type Receiver } from 'workforce-webhooks';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { recordingLogger } from '../support/logger.js';

const encoder = new TextEncoder();

async function status(receiver: Receiver, signWith: string): Promise<[number, string]> {
  const signed = await createSignedDelivery({ secret: signWith, type: 'leave.approved' });
  const answer = await receiver.handle({
    method: 'POST',
    headers: signed.headers,
    body: encoder.encode(signed.body),
  });
  await answer.background;
  return [answer.status, answer.body];
}

describe('secret', () => {
  it('builds without a secret, answers 500 not_configured and logs the option once', async () => {
    for (const secret of [undefined, '', [], () => undefined, () => '']) {
      const logger = recordingLogger();
      const receiver = createReceiver({ secret, logger });
      receiver.on('leave.approved', () => {});
      expect(await status(receiver, 'whsec_a')).toEqual([500, '{"error":"not_configured"}']);
      expect(await status(receiver, 'whsec_a')).toEqual([500, '{"error":"not_configured"}']);
      expect(logger.lines).toEqual([
        expect.objectContaining({
          level: 'error',
          msg: expect.stringContaining('Set WORKFORCE_WEBHOOK_SECRET'),
        }),
      ]);
      await receiver.close();
    }
    expect(answers.notConfigured.status).toBe(500);
  });

  it('reads a function at each delivery: set later, rotated, and rotated to a pair', async () => {
    let current: string | readonly string[] | undefined;
    const receiver = createReceiver({ secret: () => current, logger: false });
    receiver.on('leave.approved', () => {});
    expect((await status(receiver, 'whsec_one'))[0]).toBe(500);
    current = 'whsec_one';
    expect((await status(receiver, 'whsec_one'))[0]).toBe(202);
    current = ['whsec_one', 'whsec_two'];
    expect((await status(receiver, 'whsec_two'))[0]).toBe(202);
    current = 'whsec_two';
    expect((await status(receiver, 'whsec_one'))[0]).toBe(400);
    expect((await status(receiver, 'whsec_two'))[0]).toBe(202);
    await receiver.close();
  });

  it('answers 500 not_configured when the function throws or returns something unusable, and never logs a secret', async () => {
    const logger = recordingLogger();
    let value: unknown = 42;
    const receiver = createReceiver({ secret: () => value as string, logger });
    receiver.on('leave.approved', () => {});
    expect((await status(receiver, 'whsec_a'))[0]).toBe(500);
    value = () => {
      throw new Error('vault unreachable');
    };
    const throwing = createReceiver({
      secret: () => {
        throw new Error('vault unreachable');
      },
      logger,
    });
    expect((await status(throwing, 'whsec_a'))[0]).toBe(500);
    value = ' whsec_padded ';
    expect((await status(receiver, ' whsec_padded '))[0]).toBe(202);
    const msgs = logger.lines.map((line) => line.msg);
    expect(msgs).toEqual([
      expect.stringContaining('secret must be a non-empty string'),
      expect.stringContaining('no signing secret is configured'),
      expect.stringContaining('the `secret` function threw'),
      expect.stringContaining('no signing secret is configured'),
      expect.stringContaining('leading or trailing whitespace'),
    ]);
    expect(JSON.stringify(logger.lines)).not.toContain('whsec_padded');
    await receiver.close();
    await throwing.close();
  });

  it('still refuses a malformed value at construction', () => {
    expect(() => createReceiver({ secret: ['whsec_a', ''] })).toThrow(/secret/);
    expect(() => createReceiver({ secret: 42 as never })).toThrow(/secret/);
  });
});
