// Where nothing checks types (plain JavaScript, a config object spread in), a misspelt option is left unread: said
// once at creation with the names the receiver knows; so is an onStale that can never be called (ordering off).
import { describe, expect, it, onTestFinished } from 'vitest';
import { ConfigurationError, createReceiver, type ReceiverOptions } from 'workforce-webhooks';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { recordingLogger } from '../support/logger.js';

const secret = 'whsec_options_unknown_names';
const encoder = new TextEncoder();

function made(options: Record<string, unknown>) {
  const logger = recordingLogger();
  const receiver = createReceiver({ secret, logger, ...options } as ReceiverOptions);
  onTestFinished(() => receiver.close());
  const warned = () => logger.lines.filter((line) => line.level === 'warn' || line.level === 'error');
  return { receiver, warned };
}

describe('an option the receiver does not know', () => {
  it('is said once at creation, naming it and the options there are', () => {
    const { warned } = made({ toleranceMs: 600_000 });
    expect(warned()).toHaveLength(1);
    expect(warned()[0]?.level).toBe('warn');
    expect(warned()[0]?.msg).toContain(
      'createReceiver does not know the option `toleranceMs`, and ignores it',
    );
    expect(warned()[0]?.msg).toContain('toleranceSeconds');
    expect(warned()[0]?.obj).toEqual({ options: ['toleranceMs'] });
  });

  it('names every unknown one, and never a key of another shape', () => {
    const { warned } = made({ secrets: ['whsec_x'], 'whsec_abc def': 1 });
    expect(warned()).toHaveLength(1);
    expect(warned()[0]?.msg).toContain('the options `secrets`, `(a name not shown)`, and ignores them');
    expect(JSON.stringify(warned())).not.toContain('whsec_abc');
    expect(JSON.stringify(warned())).not.toContain('whsec_x');
  });

  it('says nothing of a receiver given only options it knows', async () => {
    const { receiver, warned } = made({
      toleranceSeconds: 300,
      mode: 'inline',
      ackDeadlineMs: 8000,
      ordering: {},
      onStale: () => {},
      onDeadLetter: () => {},
    });
    receiver.on('leave.approved', () => {});
    const signed = await createSignedDelivery({ secret, type: 'leave.approved' });
    const answer = await receiver.handle({
      method: 'POST',
      headers: signed.headers,
      body: encoder.encode(signed.body),
    });
    expect(answer.status).toBe(200);
    expect(warned()).toEqual([]);
  });
});

describe('onStale with ordering off', () => {
  it('is said once at creation with the fix: no event is ever skipped as stale', () => {
    const { warned } = made({ onStale: () => {} });
    expect(warned()).toHaveLength(1);
    expect(warned()[0]?.msg).toContain('onStale is set but ordering is off');
    expect(warned()[0]?.msg).toContain('Fix: turn ordering on (ordering: {}');
  });
});

describe('a mode the receiver does not know', () => {
  it('is refused at creation, naming the value given beside the two there are', () => {
    for (const [mode, shown] of [
      ['Inline', '"Inline"'],
      ['sync', '"sync"'],
      [true, 'boolean'],
    ] as const) {
      const create = () => createReceiver({ secret, logger: false, mode: mode as never });
      expect(create).toThrow(ConfigurationError);
      expect(create).toThrow(`mode must be 'queue' or 'inline', got ${shown}`);
    }
  });
});
