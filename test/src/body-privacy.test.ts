// No byte of a body reaches the logger: a marker in the body, every refusal path, every line the logger is given.
import { describe, expect, it } from 'vitest';
import { createMemoryQueue, createReceiver, type HandleInput, signPayload } from 'workforce-webhooks';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { recordingLogger } from '../support/logger.js';

const secret = 'whsec_privacy';
const encoder = new TextEncoder();
// Outside every shape a log line may quote (a uuid, a dotted lower-case type, a date).
const MARKER = 'SSN=123-45-6789 Zoë';
const NOW = 1_750_000_000;

// Everything a logger could print of a value: own properties, an error's message, stack and cause chain.
function everything(value: unknown, seen = new Set<unknown>()): string {
  if (value === null || value === undefined) return '';
  if (typeof value !== 'object') return String(value);
  if (seen.has(value)) return '';
  seen.add(value);
  const parts: string[] = [];
  if (value instanceof Error)
    parts.push(value.name, value.message, value.stack ?? '', everything(value.cause, seen));
  if (value instanceof Uint8Array) parts.push(new TextDecoder().decode(value));
  for (const key of Reflect.ownKeys(value)) {
    parts.push(String(key), everything((value as Record<PropertyKey, unknown>)[key], seen));
  }
  return parts.join(' ');
}

async function signed(body: string, headers: Record<string, string> = {}): Promise<HandleInput> {
  return {
    method: 'POST',
    headers: { 'svc-signature': await signPayload({ payload: body, secret, timestamp: NOW }), ...headers },
    body: encoder.encode(body),
  };
}

function envelope(overrides: Record<string, unknown>): string {
  return JSON.stringify({
    id: crypto.randomUUID(),
    type: 'leave.approved',
    apiVersion: '2026-10-15',
    occurredAt: '2026-11-23T10:00:00Z',
    organizationId: crypto.randomUUID(),
    data: { note: MARKER },
    ...overrides,
  });
}

describe('the logger never receives a byte of a body', () => {
  it('on every refusal path, through handle and fetch', async () => {
    const logger = recordingLogger();
    const receiver = createReceiver({
      secret,
      logger,
      now: () => NOW * 1000,
      maxBodyBytes: 4096,
      queue: createMemoryQueue(),
    });
    receiver.on('leave.approved', () => {});
    receiver.onAny(() => {});
    const body = envelope({});
    const cases: Array<{ name: string; input: HandleInput; status: number }> = [
      {
        name: 'missing signature',
        input: { method: 'POST', headers: {}, body: encoder.encode(body) },
        status: 400,
      },
      {
        name: 'malformed signature',
        input: { method: 'POST', headers: { 'svc-signature': MARKER }, body: encoder.encode(body) },
        status: 400,
      },
      {
        name: 'stale signature',
        input: {
          method: 'POST',
          headers: { 'svc-signature': await signPayload({ payload: body, secret, timestamp: NOW - 3600 }) },
          body: encoder.encode(body),
        },
        status: 400,
      },
      {
        name: 'forged signature',
        input: {
          method: 'POST',
          headers: {
            'svc-signature': await signPayload({ payload: body, secret: 'whsec_other', timestamp: NOW }),
          },
          body: encoder.encode(body),
        },
        status: 400,
      },
      { name: 'signed, not JSON', input: await signed(`ssn=${MARKER}`), status: 400 },
      { name: 'signed, JSON cut short', input: await signed(`{"note":"${MARKER}`), status: 400 },
      { name: 'signed, trailing text', input: await signed(`{} ${MARKER}`), status: 400 },
      { name: 'signed, not an object', input: await signed(JSON.stringify(MARKER)), status: 400 },
      { name: 'signed, id not a uuid', input: await signed(envelope({ id: MARKER })), status: 400 },
      { name: 'signed, type not a string', input: await signed(envelope({ type: [MARKER] })), status: 400 },
      { name: 'signed, bad occurredAt', input: await signed(envelope({ occurredAt: MARKER })), status: 400 },
      {
        name: 'signed, bad organizationId',
        input: await signed(envelope({ organizationId: MARKER })),
        status: 400,
      },
      { name: 'signed, data not an object', input: await signed(envelope({ data: MARKER })), status: 400 },
      {
        name: 'signed, Svc-Event-Type disagrees',
        input: await signed(envelope({}), { 'svc-event-type': 'leave.rejected' }),
        status: 400,
      },
      { name: 'too large', input: await signed(`${MARKER}${' '.repeat(5000)}`), status: 413 },
      { name: 'unknown type, ignored', input: await signed(envelope({ type: MARKER })), status: 202 },
      { name: 'unknown apiVersion', input: await signed(envelope({ apiVersion: MARKER })), status: 202 },
    ];
    for (const { name, input, status } of cases) {
      const answer = await receiver.handle(input);
      expect(answer.status, name).toBe(status);
      expect(answer.body).not.toContain('123-45');
      const response = await receiver.fetch(
        new Request('http://receiver.test/', {
          method: 'POST',
          headers: input.headers as Record<string, string>,
          body: input.body as Uint8Array<ArrayBuffer>,
        }),
      );
      expect(response.status, `${name} (fetch)`).toBe(status === 202 ? 200 : status);
    }
    await receiver.close();
    // Every path logged something (the refusals at info or warn), and nothing logged carries the marker.
    expect(logger.lines.length).toBeGreaterThanOrEqual(cases.length - 3);
    for (const line of logger.lines) {
      const text = everything(line);
      expect(text, line.msg).not.toContain('123-45');
      expect(text, line.msg).not.toContain('SSN');
    }
    // What stays: the class and position of JSON.parse's failure.
    expect(logger.lines.some((line) => everything(line).includes('SyntaxError'))).toBe(true);
  });

  it('when a handler fails on an event whose type is not in the spec shape', async () => {
    const logger = recordingLogger();
    const receiver = createReceiver({ secret, logger, mode: 'inline' });
    receiver.onAny(() => {
      throw new Error('handler failed');
    });
    const delivery = await createSignedDelivery({ secret, type: MARKER });
    const answer = await receiver.handle({
      method: 'POST',
      headers: delivery.headers,
      body: encoder.encode(delivery.body),
    });
    expect(answer.status).toBe(500);
    await receiver.close();
    expect(logger.lines.length).toBeGreaterThan(0);
    for (const line of logger.lines) expect(everything(line)).not.toContain('123-45');
  });
});
