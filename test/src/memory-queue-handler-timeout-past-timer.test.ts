// createMemoryQueue's handlerTimeoutMs past the longest timer (2^31 - 1 ms) is refused, as the receiver's own is.
import { describe, expect, it } from 'vitest';
import { ConfigurationError, createMemoryQueue, createReceiver } from 'workforce-webhooks';
import { MAX_TIMER_MS } from '../../src/timer-limit.js';

describe('createMemoryQueue handlerTimeoutMs', () => {
  // "No limit" written as a huge number: an attempt that times itself (a job kept alive by waitUntil or Next's
  // after()) would get a timer that Node fires after 1 ms, cutting every attempt short and dead-lettering the event.
  it.each([
    ['2^31 ms', 2 ** 31],
    ['Number.MAX_SAFE_INTEGER', Number.MAX_SAFE_INTEGER],
  ])('refuses %s at creation, naming the longest a timer waits', (_, handlerTimeoutMs) => {
    let error: unknown;
    try {
      createMemoryQueue({ handlerTimeoutMs });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toContain('handlerTimeoutMs');
    expect((error as Error).message).toContain(String(MAX_TIMER_MS));
    expect((error as Error).message).toContain(String(handlerTimeoutMs));
    // The receiver's own option says the same of the same value.
    expect(() => createReceiver({ secret: 'whsec_timer_limit', mode: 'inline', handlerTimeoutMs })).toThrow(
      String(MAX_TIMER_MS),
    );
  });

  it('takes the longest a timer waits', () => {
    expect(() => createMemoryQueue({ handlerTimeoutMs: MAX_TIMER_MS })).not.toThrow();
  });
});
