// A signature that reaches the app under another header name (a proxy's `X-Svc-Signature`, a client's or gateway's
// `svc_signature`) is named in the missing-signature warning, with the fix for that name; the name only, never a value.
import { describe, expect, it } from 'vitest';
import { signPayload } from 'workforce-webhooks';
import { signatureLookalike } from '../../src/headers.js';
import { createRefusalReport } from '../../src/refusal-report.js';
import { recordingLogger } from '../support/logger.js';

const SECRET = 'whsec_renamed_header_Km7';

describe('signatureLookalike', () => {
  it('finds the signature under a renamed header, in a Node object, a sender-cased record or Web Headers', async () => {
    const value = await signPayload({ payload: '{}', secret: SECRET, timestamp: 1_700_000_000 });
    for (const name of [
      'x-svc-signature',
      'svc_signature',
      'HTTP_SVC_SIGNATURE',
      'X-Original-Svc-Signature',
    ]) {
      expect(signatureLookalike({ 'user-agent': 'Svc-Webhooks/1.0', [name]: value })).toBe(name);
      expect(signatureLookalike({ [name]: 'garbled' })).toBe(name);
    }
    // Any name at all, when its value is a signature (a gateway that moves it into a header of its own).
    expect(signatureLookalike({ 'x-forwarded-auth': value })).toBe('x-forwarded-auth');
    expect(signatureLookalike(new Headers({ 'X-Svc-Signature': value }))).toBe('x-svc-signature');
    expect(signatureLookalike({ 'x-svc-signature': [value, value] })).toBe('x-svc-signature');
  });

  it('finds nothing in the service’s own headers, the right header, or names a log line should not carry', () => {
    expect(
      signatureLookalike({
        'content-type': 'application/json',
        'user-agent': 'Svc-Webhooks/1.0',
        'svc-event-id': crypto.randomUUID(),
        'svc-event-type': 'leave.approved',
        'svc-delivery-id': crypto.randomUUID(),
      }),
    ).toBeUndefined();
    expect(signatureLookalike({ 'Svc-Signature': 't=1,v1=x' })).toBeUndefined();
    expect(signatureLookalike(new Headers({ 'svc-signature': 't=1,v1=x' }))).toBeUndefined();
    expect(
      signatureLookalike({ 'x svc signature\n': 't=1,v1=x', [`${'x'.repeat(80)}-svc-signature`]: '' }),
    ).toBe(undefined);
  });
});

describe('the missing-signature warning', () => {
  const said = (headers: Record<string, string>): string => {
    const logger = recordingLogger();
    createRefusalReport({ logger, now: () => 0 }).refused('missing_signature', undefined, headers);
    expect(logger.lines).toHaveLength(1);
    return logger.lines[0]!.msg!;
  };

  it('names a header a proxy renamed, and asks to forward it under its own name', async () => {
    const value = await signPayload({ payload: '{}', secret: SECRET });
    const msg = said({ 'user-agent': 'Svc-Webhooks/1.0', 'x-svc-signature': value });
    expect(msg).toContain('refused 400 missing_signature');
    expect(msg).toContain('under the header `x-svc-signature`, not `Svc-Signature`');
    expect(msg).toContain('forward it under its own name, `Svc-Signature`');
    expect(msg).not.toContain(value.slice(2, 12));
  });

  it('names a header with underscores, with the hyphen fix and nginx’s default', async () => {
    const value = await signPayload({ payload: '{}', secret: SECRET });
    const msg = said({ 'svc-event-type': 'leave.approved', svc_signature: value });
    expect(msg).toContain('under the header `svc_signature`');
    expect(msg).toContain('with a hyphen');
    expect(msg).toContain('underscores_in_headers on;');
  });

  it('keeps the general fix when no header looks like the signature', () => {
    const msg = said({ 'user-agent': 'Svc-Webhooks/1.0' });
    expect(msg).toContain('forward the `Svc-Signature` header unchanged (not dropped, not renamed)');
  });
});
