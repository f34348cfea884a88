// verifySignature and signPayload given something other than bytes (a parsed body, an ArrayBuffer, nothing) say so.
import { describe, expect, it } from 'vitest';
import { ConfigurationError, signPayload, verifySignature, WebhookError } from 'workforce-webhooks';

const SECRET = 'whsec_raw_payload_test';
const T = 1_700_000_000;
const at = (seconds: number) => () => seconds * 1000;
// A field a parsed body would carry: no error message may repeat it.
const MARKER = 'Zoë-private-note-4711';
const parsed = { id: 'evt_1', type: 'leave.approved', data: { note: MARKER } };

const refusal = async (pending: Promise<unknown>): Promise<WebhookError> => {
  try {
    await pending;
  } catch (error) {
    return error as WebhookError;
  }
  throw new Error('expected a refusal');
};

describe('verifySignature with a payload that is not the raw body', () => {
  const header = `t=${T},v1=${'a'.repeat(64)}`;

  it.each([
    ['a parsed JSON body', parsed],
    ['an ArrayBuffer', new TextEncoder().encode(JSON.stringify(parsed)).buffer],
    ['nothing (no body parser ran)', undefined],
    ['null', null],
  ])('refuses %s as raw_body_unavailable, naming the fix and no byte of it', async (_, payload) => {
    const error = await refusal(
      verifySignature({ payload: payload as never, header, secret: SECRET, now: at(T) }),
    );
    expect(error).toBeInstanceOf(WebhookError);
    expect(error.code).toBe('raw_body_unavailable');
    expect(error.message).toMatch(/^workforce-webhooks: /);
    expect(error.message).toContain('express.raw');
    expect(error.message).toContain('new Uint8Array(');
    expect(error.message).not.toContain(MARKER);
    expect(error.message).not.toContain('leave.approved');
  });

  it('still verifies a Buffer, a Uint8Array and a string of the same bytes alike', async () => {
    const body = JSON.stringify(parsed);
    const signed = await signPayload({ payload: body, secret: SECRET, timestamp: T });
    for (const payload of [body, new TextEncoder().encode(body), Buffer.from(body)]) {
      const result = await verifySignature({ payload, header: signed, secret: SECRET, now: at(T) });
      expect(result.timestamp).toBe(String(T));
    }
  });
});

describe('signPayload with a payload that is not bytes', () => {
  it.each([
    ['an object', parsed],
    ['an ArrayBuffer', new ArrayBuffer(4)],
    ['nothing', undefined],
  ])('refuses %s as a ConfigurationError that says what to pass', async (_, payload) => {
    const error = await refusal(signPayload({ payload: payload as never, secret: SECRET, timestamp: T }));
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error.message).toContain('JSON.stringify');
    expect(error.message).not.toContain(MARKER);
  });
});
