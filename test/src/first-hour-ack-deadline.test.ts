// An inline ackDeadlineMs at or past the service's 10 s answer time (spec rule 2): every run longer than 10 s would be
// answered after the service gave up on it, counted as a failed delivery and sent again. Said once, with the fix, at
// creation; a deadline under 10 s, or one queue mode never uses, says nothing.
import { describe, expect, it, onTestFinished } from 'vitest';
import { createReceiver, type ReceiverOptions } from 'workforce-webhooks';
import { recordingLogger } from '../support/logger.js';

const secret = 'whsec_first_hour_ack_deadline';

function warnedAt(options: Partial<ReceiverOptions>) {
  const logger = recordingLogger();
  const receiver = createReceiver({ secret, logger, ...options });
  onTestFinished(() => receiver.close());
  return logger.lines
    .filter((line) => line.level === 'warn' || line.level === 'error')
    .map((line) => line.msg ?? '');
}

describe('an inline ackDeadlineMs not under the service answer time', () => {
  for (const ackDeadlineMs of [10_000, 30_000]) {
    it(`is said once at creation for ${ackDeadlineMs} ms, with the consequence and the fix`, () => {
      const said = warnedAt({ mode: 'inline', ackDeadlineMs });
      expect(said).toHaveLength(1);
      expect(said[0]).toMatch(/^workforce-webhooks: /);
      expect(said[0]).toContain(`ackDeadlineMs is ${ackDeadlineMs}`);
      expect(said[0]).toContain('10 s');
      expect(said[0]).toContain('sent again');
      expect(said[0]).toContain('Fix: leave ackDeadlineMs unset (8000) or under 10000');
    });
  }

  it('says nothing of the default, of a deadline under 10 s, or of one queue mode does not use', () => {
    expect(warnedAt({ mode: 'inline' })).toEqual([]);
    expect(warnedAt({ mode: 'inline', ackDeadlineMs: 9_999 })).toEqual([]);
    expect(warnedAt({ ackDeadlineMs: 30_000 })).toEqual([]);
  });
});
