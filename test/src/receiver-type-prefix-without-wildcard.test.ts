// A prefix of the service's types written without `.*` (`on('leave', ...)`) where nothing checks types is an exact
// type never sent: every delivery it was meant for is answered 200 ignored. Said once, naming the wildcard meant.
import { describe, expect, it, onTestFinished } from 'vitest';
import { createReceiver } from 'workforce-webhooks';
import { typoWarning } from '../../src/unknown-type.js';
import { recordingLogger } from '../support/logger.js';
import { signedLeave } from '../support/ordering-scenario.js';

const secret = 'whsec_receiver_type_prefix';

describe('a prefix of the service types without .*', () => {
  for (const [pattern, meant] of [
    ['leave', 'leave.*'],
    ['Leave', 'leave.*'],
    ['attendance.exception', 'attendance.exception.*'],
    ['payroll', 'payroll.*'],
  ] as const) {
    it(`names '${meant}' for '${pattern}', with the fix`, () => {
      const said = typoWarning(pattern);
      expect(said).toContain(
        `on('${pattern}') names no event type the service sends: did you mean '${meant}'?`,
      );
      expect(said).toContain(`Fix: on('${meant}', ...)`);
    });
  }

  it('is said once by the receiver, and its deliveries stay answered 200 ignored', async () => {
    const logger = recordingLogger();
    const receiver = createReceiver({ secret, logger });
    onTestFinished(() => receiver.close());
    let ran = 0;
    const on = receiver.on as (pattern: string, handler: () => void) => unknown;
    on.call(receiver, 'leave', () => {
      ran++;
    });
    await Promise.resolve(); // judged once the start-up code has made its registrations
    const answer = await receiver.handle(await signedLeave(secret, 'leave.approved', 1, crypto.randomUUID()));
    expect({ status: answer.status, body: answer.body }).toEqual({
      status: 200,
      body: JSON.stringify({ received: true, ignored: true }),
    });
    expect(ran).toBe(0);
    const said = logger.lines.filter((line) => line.level === 'warn' || line.level === 'error');
    expect(said).toHaveLength(1);
    expect(said[0]?.msg).toContain("did you mean 'leave.*'?");
  });

  it('says nothing when the app handles the types under it already, or for a name of its own', () => {
    expect(typoWarning('leave', (type) => type === 'leave.approved')).toBeUndefined();
    expect(typoWarning('leave.*')).toBeUndefined();
    expect(typoWarning('benefits')).toBeUndefined();
  });
});
