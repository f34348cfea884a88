// A secret that is only the `whsec_` prefix (an example env file's placeholder, the README's `whsec_...`) is a key
// anyone could sign with: refused where it is given, never used to accept a forgery.
import { describe, expect, it, onTestFinished } from 'vitest';
import { ConfigurationError, createReceiver, verifySignature } from 'workforce-webhooks';
import { createSignedDelivery, signPayload } from 'workforce-webhooks/testing';
import { recordingLogger } from '../support/logger.js';

const encoder = new TextEncoder();
// The bare prefix, the README's `whsec_...`, the CLI's redacted `whsec_***`, with the whitespace an env file adds.
const PLACEHOLDERS = ['whsec_', 'whsec_...', 'whsec_…', 'whsec_***', ' whsec_\n', 'whsec_ \r\n'];

describe('a secret that is only the whsec_ prefix', () => {
  it.each(PLACEHOLDERS)('is refused at createReceiver, alone or beside a real one (%j)', (placeholder) => {
    for (const secret of [placeholder, ['whsec_real_one_Hq2', placeholder]]) {
      expect(() => createReceiver({ secret, logger: false })).toThrow(ConfigurationError);
      expect(() => createReceiver({ secret, logger: false })).toThrow(
        /the prefix alone.*Pass the endpoint's whole secret/,
      );
    }
  });

  it('returned by the secret function, answers 500 not_configured to a forgery signed with it, said once', async () => {
    const logger = recordingLogger();
    const receiver = createReceiver({ secret: () => 'whsec_...', logger });
    onTestFinished(() => receiver.close());
    let ran = 0;
    receiver.on('leave.approved', () => {
      ran++;
    });
    for (let i = 0; i < 3; i++) {
      // Anyone can make this delivery: the key is the README's placeholder.
      const delivery = await createSignedDelivery({ secret: 'whsec_other_Hq2', type: 'leave.approved' });
      const headers = { ...delivery.headers, 'svc-signature': await signWithKey(delivery.body, 'whsec_...') };
      const answer = await receiver.handle({ method: 'POST', headers, body: encoder.encode(delivery.body) });
      await answer.background;
      expect({ status: answer.status, body: answer.body }).toEqual({
        status: 500,
        body: '{"error":"not_configured"}',
      });
    }
    expect(ran).toBe(0);
    const placeholderLines = logger.lines.filter((line) => line.msg?.includes('the prefix alone'));
    expect(placeholderLines).toHaveLength(1);
    expect(placeholderLines[0]!.level).toBe('error');
  });

  it('is refused by verifySignature rather than verifying a signature made with it', async () => {
    const payload = '{"id":"forged"}';
    const header = await signWithKey(payload, 'whsec_');
    await expect(verifySignature({ payload, header, secret: 'whsec_' })).rejects.toThrow(ConfigurationError);
  });

  it('is refused, as a secret of only whitespace is (a variable or file holding a newline)', async () => {
    for (const blank of [' ', '\n', '\t\r\n']) {
      expect(() => createReceiver({ secret: blank, logger: false })).toThrow(/only whitespace/);
      expect(() => createReceiver({ secret: ['whsec_real_one_Hq2', blank], logger: false })).toThrow(
        ConfigurationError,
      );
      const payload = '{"id":"forged"}';
      await expect(
        verifySignature({ payload, header: await signWithKey(payload, blank), secret: blank }),
      ).rejects.toThrow(/only whitespace/);
    }
  });

  it('leaves a secret that merely starts with whsec_ alone, however short', async () => {
    for (const secret of ['whsec_a', 'whsec_._', 'whsec_x...']) {
      const logger = recordingLogger();
      const receiver = createReceiver({ secret, logger });
      onTestFinished(() => receiver.close());
      expect(logger.lines).toEqual([]);
      const payload = '{}';
      const header = await signPayload({ payload, secret });
      await expect(verifySignature({ payload, header, secret })).resolves.toMatchObject({
        signatures: [expect.any(String)],
      });
    }
  });
});

// The header a forger computes with the placeholder as key: HMAC-SHA256 of `t.payload`, done here by Web Crypto.
async function signWithKey(payload: string, key: string): Promise<string> {
  const t = Math.floor(Date.now() / 1000);
  const cryptoKey = await crypto.subtle.importKey(
    'raw',
    encoder.encode(key),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  const digest = new Uint8Array(
    await crypto.subtle.sign('HMAC', cryptoKey, encoder.encode(`${t}.${payload}`)),
  );
  return `t=${t},v1=${Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}
