// on() given what its types forbid (from JavaScript): a ConfigurationError with the call to write, nothing registered.
import { describe, expect, it } from 'vitest';
import { ConfigurationError, createReceiver, silentLogger } from 'workforce-webhooks';
import { createSignedDelivery } from 'workforce-webhooks/testing';

const secret = 'whsec_handlers_pattern_shape';
const encoder = new TextEncoder();

async function delivery(type: string) {
  const signed = await createSignedDelivery({ secret, type } as never);
  return { method: 'POST', headers: signed.headers, body: encoder.encode(signed.body) };
}

const handler = (): void => {};

describe('on() given a pattern that is neither a string nor an array', () => {
  it.each([
    ['an object', { type: 'leave.approved' }],
    ['a Set', new Set(['leave.approved'])],
    ['a number', 42],
    ['undefined', undefined],
  ])('refuses %s with a ConfigurationError naming the call to write', async (_label, pattern) => {
    const receiver = createReceiver({ secret, logger: silentLogger });
    const on = () => receiver.on(pattern as never, handler);
    expect(on).toThrow(ConfigurationError);
    expect(on).toThrow(/on\("leave.approved", handler\)/);
    // Nothing was registered: the type it meant is still answered ignored.
    const answer = await receiver.handle(await delivery('leave.approved'));
    expect(JSON.parse(answer.body)).toEqual({ received: true, ignored: true });
    await receiver.close();
  });

  it('refuses the arguments swapped, saying the type comes first', () => {
    const receiver = createReceiver({ secret, logger: silentLogger });
    expect(() => receiver.on(handler as never, 'leave.approved' as never)).toThrow(
      /takes an event type.*first, then the handler/,
    );
  });

  it('still takes a string, an array and an onAny catch-all', async () => {
    const receiver = createReceiver({ secret, logger: silentLogger, mode: 'inline' });
    const ran: string[] = [];
    receiver.on('leave.approved', () => void ran.push('one'));
    receiver.on(['leave.approved', 'leave.rejected'], () => void ran.push('array'));
    receiver.onAny(() => void ran.push('any'));
    expect((await receiver.handle(await delivery('leave.approved'))).status).toBe(200);
    expect(ran.sort()).toEqual(['any', 'array', 'one']);
    await receiver.close();
  });
});
