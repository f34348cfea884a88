// Two first-hour mistakes that lose events without a word where nothing checks types (tsx, plain JavaScript): a
// misspelt event type in on(), and handlers registered after the app began to take deliveries. Each is said once,
// with the fix; a receiver set up right says nothing.
import { describe, expect, it, onTestFinished } from 'vitest';
import { createReceiver, unknownType } from 'workforce-webhooks';
import { recordingLogger } from '../support/logger.js';
import { signedLeave } from '../support/ordering-scenario.js';

const secret = 'whsec_receiver_first_hour';

const warned = (logger: ReturnType<typeof recordingLogger>) =>
  logger.lines
    .filter((line) => line.level === 'warn' || line.level === 'error')
    .map((line) => line.msg ?? '');

describe('a misspelt event type in on()', () => {
  it('is said once, with the type meant, and its deliveries are answered 200 ignored as before', async () => {
    const logger = recordingLogger();
    const receiver = createReceiver({ secret, logger });
    onTestFinished(() => receiver.close());
    const handle = receiver.on as (pattern: string, handler: () => void) => unknown;
    handle.call(receiver, 'leave.aproved', () => {});
    handle.call(receiver, 'leave.aproved', () => {});
    await Promise.resolve(); // judged once the start-up code has made its registrations
    const said = warned(logger);
    expect(said).toHaveLength(1);
    expect(said[0]).toContain(
      "on('leave.aproved') names no event type the service sends: did you mean 'leave.approved'?",
    );
    const answer = await receiver.handle(await signedLeave(secret, 'leave.approved', 1, crypto.randomUUID()));
    expect({ status: answer.status, body: answer.body }).toEqual({
      status: 200,
      body: JSON.stringify({ received: true, ignored: true }),
    });
    expect(warned(logger)).toHaveLength(1);
  });

  it('says nothing of the types the service sends, a list of them, a prefix, or a name let in with unknownType', () => {
    const logger = recordingLogger();
    const receiver = createReceiver({ secret, logger });
    onTestFinished(() => receiver.close());
    receiver.on('leave.approved', () => {});
    receiver.on(['leave.cancelled', 'employee.terminated'], () => {});
    receiver.on('attendance.*', () => {});
    receiver.on(unknownType('leave.approve'), () => {});
    receiver.onAny(() => {});
    expect(warned(logger)).toEqual([]);
  });
});

describe('a delivery before any handler was registered', () => {
  it('is said once, with the fix, and stays answered 200 ignored', async () => {
    const logger = recordingLogger();
    const receiver = createReceiver({ secret, logger });
    onTestFinished(() => receiver.close());
    for (let second = 1; second <= 2; second++) {
      const answer = await receiver.handle(
        await signedLeave(secret, 'leave.approved', second, crypto.randomUUID()),
      );
      expect(answer.status).toBe(200);
    }
    const said = warned(logger);
    expect(said).toHaveLength(1);
    expect(said[0]).toContain('before any handler was registered');
    expect(said[0]).toContain('before the app listens');
  });

  it('says nothing of a type with no handler once handlers are registered (an app may leave types unhandled)', async () => {
    const logger = recordingLogger();
    const receiver = createReceiver({ secret, logger });
    onTestFinished(() => receiver.close());
    receiver.on('employee.terminated', () => {});
    const answer = await receiver.handle(await signedLeave(secret, 'leave.approved', 1, crypto.randomUUID()));
    expect(answer.status).toBe(200);
    expect(warned(logger)).toEqual([]);
  });
});
