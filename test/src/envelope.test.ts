// The event envelope: what a verified body must hold before any handler sees it.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidPayloadError, parseEvent } from 'workforce-webhooks';
import { nearMiss } from '../support/near-miss.js';

const valid = {
  id: '3f1c2d4e-5a6b-4c7d-8e9f-0a1b2c3d4e5f',
  type: 'leave.approved',
  apiVersion: '2026-10-15',
  occurredAt: '2026-11-21T10:15:30.123Z',
  organizationId: '00000000-0000-4000-8000-000000000001',
  data: { leaveRequestId: 'x', startDate: '2026-12-24T00:00:00' },
};
const bytes = (value: unknown): Uint8Array =>
  new TextEncoder().encode(typeof value === 'string' ? value : JSON.stringify(value));

describe('parseEvent', () => {
  it('returns the event with dates left as the strings sent', () => {
    const event = parseEvent(bytes(valid));
    expect(event).toEqual(valid);
    expect(event.data.startDate).toBe('2026-12-24T00:00:00');
  });

  it('accepts matching Svc-Event-Id / Svc-Event-Type headers, from a Headers or a plain object', () => {
    const headers = { 'svc-event-id': valid.id, 'svc-event-type': valid.type };
    expect(parseEvent(bytes(valid), headers).id).toBe(valid.id);
    expect(parseEvent(bytes(valid), new Headers(headers)).type).toBe(valid.type);
  });

  it('accepts an apiVersion it does not know (the receiver logs it once)', () => {
    expect(parseEvent(bytes({ ...valid, apiVersion: '2027-01-01' })).apiVersion).toBe('2027-01-01');
  });

  it.each([
    ['not JSON', '{"id":'],
    ['an array', '[]'],
    ['null', 'null'],
    ['a string', '"leave.approved"'],
    ['id not a uuid', { ...valid, id: 'evt_1' }],
    ['id missing', { ...valid, id: undefined }],
    ['type empty', { ...valid, type: '' }],
    ['type a number', { ...valid, type: 3 }],
    ['apiVersion missing', { ...valid, apiVersion: undefined }],
    ['occurredAt not a date', { ...valid, occurredAt: 'yesterday' }],
    ['organizationId not a uuid', { ...valid, organizationId: 'org' }],
    ['data null', { ...valid, data: null }],
    ['data an array', { ...valid, data: [] }],
  ])('refuses %s', (_, body) => {
    expect(() => parseEvent(bytes(body))).toThrow(InvalidPayloadError);
  });

  it('refuses headers that disagree with the signed body', () => {
    expect(() =>
      parseEvent(bytes(valid), { 'svc-event-id': '3f1c2d4e-5a6b-4c7d-8e9f-000000000000' }),
    ).toThrow(/Svc-Event-Id/);
    expect(() => parseEvent(bytes(valid), { 'svc-event-type': 'leave.rejected' })).toThrow(/Svc-Event-Type/);
  });

  it('keeps a stray invalid UTF-8 byte inside a string as U+FFFD rather than losing the event', () => {
    const body = bytes({ ...valid, data: { note: 'X' } });
    const index = body.indexOf(0x58);
    body[index] = 0xff;
    expect((parseEvent(body).data as { note: string }).note).toBe('\uFFFD');
  });

  it('takes an id or organizationId exactly when it is 8-4-4-4-12 hex digits of either case', () => {
    // Uuid-like text with one character changed, dropped or added, any case, anywhere.
    const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
    const uuidLike = nearMiss(fc.uuid({ version: 4 }), [
      '',
      '-',
      'g',
      'G',
      'F',
      '0',
      ' ',
      '\u00e9',
      '\u0660',
      'ff',
    ]);
    fc.assert(
      fc.property(fc.oneof(uuidLike, fc.string({ maxLength: 40 })), fc.boolean(), (candidate, asId) => {
        let accepted = true;
        try {
          parseEvent(bytes(asId ? { ...valid, id: candidate } : { ...valid, organizationId: candidate }));
        } catch {
          accepted = false;
        }
        expect(accepted).toBe(UUID.test(candidate));
      }),
      { numRuns: 20_000 },
    );
  });
});
