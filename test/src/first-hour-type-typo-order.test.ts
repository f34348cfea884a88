// The on() check for a misspelt type answers the same whatever the order of the registrations: a name of the app's
// own registered before the neighbour it sits beside (or before a catch-all) is not called a typo, and a real typo is
// said once whichever registrations come after it.
import { describe, expect, it, onTestFinished } from 'vitest';
import { createReceiver } from 'workforce-webhooks';
import { recordingLogger } from '../support/logger.js';

const secret = 'whsec_first_hour_type_typo_order';

const warned = (logger: ReturnType<typeof recordingLogger>) =>
  logger.lines
    .filter((line) => line.level === 'warn' || line.level === 'error')
    .map((line) => line.msg ?? '');

// A receiver whose on() is called as plain JavaScript would: any string.
function receiverAsJavaScript() {
  const logger = recordingLogger();
  const receiver = createReceiver({ secret, logger });
  onTestFinished(() => receiver.close());
  const on = receiver.on as unknown as (pattern: string | string[], handler: () => void) => unknown;
  return { receiver, logger, on: (pattern: string | string[]) => on.call(receiver, pattern, () => {}) };
}

// The start-up code of an app has run to its end (its first await).
const startedUp = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

describe('the misspelt-type check of on(), whatever the order of the registrations', () => {
  it('says nothing of a name of its own registered before the handled neighbour it sits beside', async () => {
    const { logger, on } = receiverAsJavaScript();
    on('employer.*');
    on('employer.created');
    on('order.*');
    on('employee.*');
    on('offer.accepted');
    await startedUp();
    expect(warned(logger)).toEqual([]);
  });

  it('says nothing of a near name registered before a catch-all: its deliveries run, none is ignored', async () => {
    const { receiver, logger, on } = receiverAsJavaScript();
    on('leave.aproved');
    receiver.onAny(() => {});
    await startedUp();
    expect(warned(logger)).toEqual([]);
  });

  it('says the same in both orders: nothing, whichever of the name and its neighbour comes first', async () => {
    const first = receiverAsJavaScript();
    first.on('employee.terminated');
    first.on('employe.terminated');
    const second = receiverAsJavaScript();
    second.on('employe.terminated');
    second.on('employee.terminated');
    await startedUp();
    expect(warned(first.logger)).toEqual([]);
    expect(warned(second.logger)).toEqual([]);
  });

  it('still says a real typo once, with the type meant, whatever is registered after it', async () => {
    const { logger, on } = receiverAsJavaScript();
    on('leave.aproved');
    on('employee.created');
    on('leave.aproved');
    on('payroll.*');
    await startedUp();
    const said = warned(logger);
    expect(said).toHaveLength(1);
    expect(said[0]).toContain(
      "on('leave.aproved') names no event type the service sends: did you mean 'leave.approved'?",
    );
  });
});
