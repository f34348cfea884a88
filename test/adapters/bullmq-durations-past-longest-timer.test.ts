// "No limit" written as a huge number of milliseconds: a timer that long fires after 1 ms, so the BullMQ queue refuses
// such a duration when it is made, before any connection is opened, naming the option and the limit.
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';

describe('createBullmqQueue with a duration past the longest timer', () => {
  it.each([
    ['handlerTimeoutMs', { handlerTimeoutMs: Number.MAX_SAFE_INTEGER }],
    ['lockDurationMs', { lockDurationMs: 2 ** 31 }],
    ['stalledIntervalMs', { stalledIntervalMs: 2 ** 40 }],
  ])('refuses %s at creation, naming it and the limit', (key, options) => {
    const make = () => createBullmqQueue({ connection: 'redis://127.0.0.1:1', ...options });
    expect(make).toThrow(ConfigurationError);
    expect(make).toThrow(new RegExp(`queue ${key} must be at most 2147483647 ms`));
  });

  it('takes the longest timer itself', async () => {
    const queue = createBullmqQueue({ connection: 'redis://127.0.0.1:1', handlerTimeoutMs: 2 ** 31 - 1 });
    await queue.close({ timeoutMs: 1000 });
  });
});
