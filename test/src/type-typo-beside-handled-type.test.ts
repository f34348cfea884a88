// A name of the app's own a keystroke or two from a type the service sends (`employer.*` beside `employee.*`): the
// type meant already has a handler, so nothing of it is ignored and on() says nothing; a real typo still warns.
import { describe, expect, it, onTestFinished } from 'vitest';
import { createReceiver } from 'workforce-webhooks';
import { recordingLogger } from '../support/logger.js';

const secret = 'whsec_type_typo_beside_handled_type';

const warned = (logger: ReturnType<typeof recordingLogger>) =>
  logger.lines
    .filter((line) => line.level === 'warn' || line.level === 'error')
    .map((line) => line.msg ?? '');

// The registrations are judged once the start-up code that made them has run (a microtask later).
const registered = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

// A receiver whose on() is called as plain JavaScript would: any string.
function receiverAsJavaScript(logger: ReturnType<typeof recordingLogger>) {
  const receiver = createReceiver({ secret, logger });
  onTestFinished(() => receiver.close());
  const on = receiver.on as unknown as (pattern: string | string[], handler: () => void) => unknown;
  return { receiver, on: (pattern: string | string[]) => on.call(receiver, pattern, () => {}) };
}

describe('an on() pattern near a type the service sends', () => {
  it('says nothing when the type meant already has a handler: a name of its own, not a typo', async () => {
    const logger = recordingLogger();
    const { on } = receiverAsJavaScript(logger);
    on('employee.*');
    on('employer.*');
    on('offer.accepted');
    on('order.*');
    on('employee.created');
    on('employer.created');
    // One call naming both: the type meant goes to this very handler.
    on(['payroll.paid', 'payroll.void']);
    await registered();
    expect(warned(logger)).toEqual([]);
  });

  it('says nothing after a catch-all: the type meant is handled, never ignored', async () => {
    const logger = recordingLogger();
    const { receiver, on } = receiverAsJavaScript(logger);
    receiver.onAny(() => {});
    on('leave.aproved');
    await registered();
    expect(warned(logger)).toEqual([]);
  });

  it('still warns of a near name whose type meant nothing handles', async () => {
    const logger = recordingLogger();
    const { on } = receiverAsJavaScript(logger);
    on('employee.terminated');
    on('employer.*');
    await registered();
    expect(warned(logger)).toEqual([]);
    on('leave.aproved');
    await registered();
    expect(warned(logger)).toHaveLength(1);
    expect(warned(logger)[0]).toContain("did you mean 'leave.approved'?");
  });
});
